/**
 * Every job type's definition, once each, for the composition root: the program entry passes this
 * list to the CLI, which hands it to the worker runner (it refuses a list that differs from the
 * contract's `JOB_TYPES`). src/ never imports jobs/.
 */
import type { JobDefinitions } from '../src/pipeline/index.js';
import { convertPieceJob } from './convert-piece.js';
import { exportPartJob } from './export-part.js';
import { loadSnapshotJob } from './load-snapshot.js';
import { nightlyTriggerJob } from './nightly-trigger.js';
import { publishSnapshotJob } from './publish-snapshot.js';

/** The job definitions, one per type of `JOB_TYPES`. */
export const jobDefinitions: JobDefinitions = [
  exportPartJob,
  publishSnapshotJob,
  nightlyTriggerJob,
  convertPieceJob,
  loadSnapshotJob,
];
