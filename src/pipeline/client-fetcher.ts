/**
 * Adapts the API client to the part processor: one dataset of one company = one call. Streamed
 * operations hand rows through as they are parsed; issuer/reference (one small object) is read
 * whole and presented the same way.
 */
import type { B2bOperation, FilingsClient, StreamOperation } from '../api/index.js';
import type { DatasetName } from '../types.js';
import { datasetDefinition } from '../datasets/index.js';
import type { PartFetcher, PartResponse } from './ports.js';
import { companyScope, type Company } from './universe.js';

export function clientFetcher(client: FilingsClient): PartFetcher {
  return {
    async fetch(dataset: DatasetName, company: Company, signal?: AbortSignal): Promise<PartResponse> {
      const spec = datasetDefinition(dataset);
      const body = { ...companyScope(company), ...spec.extraBody };
      const opts = signal ? { signal } : {};
      if (spec.streamed) {
        // The body's shape per operation is checked by the client's validateRequest.
        // Rows whose received text is already their staged line are copied, not serialised again.
        return client.stream(spec.operation as StreamOperation, body as never, { ...opts, rawText: true });
      }
      const res = await client.call(spec.operation as B2bOperation, body as never, opts);
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
