/**
 * The shape of a snapshot in BullMQ: one flow, a `publish-snapshot` parent in the snapshots queue
 * and one `export-part` child per (company, dataset) in the parts queue, all with deterministic
 * ids. Failure options are chosen so the parent always runs: a child that fails for good becomes
 * an ignored dependency (ignoreDependencyOnFailure) and the parent records it as a failed part.
 */
import type { FlowJob } from 'bullmq';
import { partJobId, publishJobId } from './ids.js';
import { CHANGE_DATASET } from '../part/index.js';
import { companyKey, partsQueueName, type SnapshotSpec } from '../record/index.js';
import {
  EXPORT_PART,
  PUBLISH_SNAPSHOT,
  type ExportPartPayload,
  type JobSettings,
  type PublishSnapshotPayload,
  type QueueRole,
} from './job-payloads.js';

/** The BullMQ queue of each role (job-payloads.ts `QueueRole` says what each holds). */
export type QueueNames = Record<QueueRole, string>;

export function queueNames(base: string): QueueNames {
  return { parts: partsQueueName(base), snapshots: `${base}-snapshots` };
}

export interface FlowSettings extends JobSettings {
  queues: QueueNames;
}

export function buildSnapshotFlow(spec: SnapshotSpec, s: FlowSettings): FlowJob {
  const children: FlowJob[] = [];
  // Company-major order: every dataset advances together, so status reads evenly.
  for (const company of spec.companies) {
    for (const dataset of spec.datasets) {
      const data: ExportPartPayload = {
        v: 1,
        snapshotId: spec.id,
        snapshotDate: spec.date,
        dataset,
        company,
        outDir: spec.outDir,
        ...(spec.reuse !== undefined ? { reuse: spec.reuse } : {}),
      };
      children.push({
        name: EXPORT_PART.name,
        queueName: s.queues[EXPORT_PART.queue],
        data,
        opts: {
          jobId: partJobId(spec.id, dataset, companyKey(company)),
          // Incremental: the catalogs go first, they decide whether the other parts need a request.
          ...(spec.reuse !== undefined ? { priority: dataset === CHANGE_DATASET ? 1 : 2 } : {}),
          ...EXPORT_PART.options(s),
        },
      });
    }
  }
  const parent: PublishSnapshotPayload = {
    v: 1,
    snapshotId: spec.id,
    snapshotDate: spec.date,
    outDir: spec.outDir,
    ...(spec.reuse !== undefined ? { reuse: spec.reuse } : {}),
    ...(spec.changesAgainst !== undefined ? { changesAgainst: spec.changesAgainst } : {}),
    formats: spec.formats,
    datasets: spec.datasets,
    total: spec.companies.length * spec.datasets.length,
  };
  return {
    name: PUBLISH_SNAPSHOT.name,
    queueName: s.queues[PUBLISH_SNAPSHOT.queue],
    data: parent,
    opts: {
      jobId: publishJobId(spec.id),
      ...PUBLISH_SNAPSHOT.options(s),
    },
    children,
  };
}
