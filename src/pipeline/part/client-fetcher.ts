/**
 * Adapts the API client to the part processor: one dataset of one company = one call. Streamed
 * operations hand rows through as they are parsed; issuer/reference (one small object) is read
 * whole and presented the same way.
 */
import {
  isStreamOperation,
  type B2bOperation,
  type B2bOperations,
  type FilingsClient,
} from '../../api/index.js';
import type { DatasetName } from '../../types.js';
import { DATASET_REGISTRY } from '../../datasets/index.js';
import type { PartFetcher, PartResponse } from './ports.js';
import { companyScope, type Company } from '../record/index.js';

type Entry<D extends DatasetName> = (typeof DATASET_REGISTRY)[D];
type RequestOf<D extends DatasetName> = B2bOperations[Entry<D>['operation']]['request'];
/**
 * Datasets whose request fields are not fields of their operation's request in the contract, or
 * not of its types (an operation that is not a contract id already fails on `RequestOf`).
 */
type MisfitDatasets = {
  [D in DatasetName]: Entry<D>['extraBody'] extends Partial<RequestOf<D>>
    ? [Exclude<keyof Entry<D>['extraBody'], keyof RequestOf<D>>] extends [never]
      ? never
      : D
    : D;
}[DatasetName];
// Fails to compile, naming the dataset, when an entry's request fields do not fit its operation.
const registryFitsContract: [MisfitDatasets] extends [never] ? true : MisfitDatasets = true;
void registryFitsContract;

export function clientFetcher(client: FilingsClient): PartFetcher {
  return {
    async fetch(dataset: DatasetName, company: Company, signal?: AbortSignal): Promise<PartResponse> {
      const spec = DATASET_REGISTRY[dataset];
      const operation: B2bOperation = spec.operation;
      const body = { ...companyScope(company), ...spec.extraBody };
      const opts = signal ? { signal } : {};
      if (isStreamOperation(operation)) {
        // Rows whose received text is already their staged line are copied, not serialised again.
        return client.stream(operation, body, { ...opts, rawText: true });
      }
      const res = await client.call(operation, body, opts);
      const { rows, ...envelope } = res.data as { rows?: unknown };
      const list = Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
      return {
        rows: (async function* () {
          yield* list;
        })(),
        envelope: () => Promise.resolve(envelope),
        status: res.status,
        rateLimit: res.rateLimit,
        cancel: () => Promise.resolve(), // the body was read whole already
      };
    },
  };
}
