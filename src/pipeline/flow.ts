/**
 * The shape of a snapshot in BullMQ: one flow, a `publish-snapshot` parent in the snapshots queue
 * and one `export-part` child per (company, dataset) in the parts queue, all with deterministic
 * ids. Failure options are chosen so the parent always runs: a child that fails for good becomes
 * an ignored dependency (ignoreDependencyOnFailure) and the parent records it as a failed part.
 */
import type { FlowJob, KeepJobs } from 'bullmq';
import { BACKOFF_TYPE } from './backoff.js';
import { partJobId, publishJobId } from './ids.js';
import { CHANGE_DATASET } from './reuse-decision.js';
import type { SnapshotSpec } from './snapshot-store.js';
import { companyKey } from './universe.js';
import {
  EXPORT_PART_JOB,
  PUBLISH_SNAPSHOT_JOB,
  type ExportPartPayload,
  type PublishSnapshotPayload,
} from './job-payloads.js';

export interface QueueNames {
  /** Part jobs: rate-limited by the budget (one job start = one request). */
  parts: string;
  /** Snapshot parents (publish) and the nightly trigger: not rate-limited. */
  snapshots: string;
}

export function queueNames(base: string): QueueNames {
  return { parts: `${base}-parts`, snapshots: `${base}-snapshots` };
}

export interface FlowSettings {
  queues: QueueNames;
  /** Attempts per part for transient failures. */
  attempts: number;
  keepCompleted: KeepJobs;
  keepFailed: KeepJobs;
  /** First retry delay of the publish job and the nightly trigger (retry.base_delay_ms); doubles per attempt. */
  controlBackoffMs: number;
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
        name: EXPORT_PART_JOB,
        queueName: s.queues.parts,
        data,
        opts: {
          jobId: partJobId(spec.id, dataset, companyKey(company)),
          // Incremental: the catalogs go first, they decide whether the other parts need a request.
          ...(spec.reuse !== undefined ? { priority: dataset === CHANGE_DATASET ? 1 : 2 } : {}),
          attempts: s.attempts,
          backoff: { type: BACKOFF_TYPE },
          ignoreDependencyOnFailure: true,
          removeOnComplete: s.keepCompleted,
          removeOnFail: s.keepFailed,
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
    name: PUBLISH_SNAPSHOT_JOB,
    queueName: s.queues.snapshots,
    data: parent,
    opts: {
      jobId: publishJobId(spec.id),
      // The configured retry settings, as for parts (a disk hiccup, a Redis blip).
      attempts: s.attempts,
      backoff: { type: 'exponential', delay: s.controlBackoffMs },
      removeOnComplete: s.keepCompleted,
      removeOnFail: s.keepFailed,
    },
    children,
  };
}
