/**
 * Every job type's processor factory, for the composition root: the program entry passes this
 * registry to the CLI, which hands it to the worker runner. src/ never imports jobs/.
 */
import type { JobProcessors } from '../src/pipeline/job-processors.js';
import { createConvertSegmentProcessor } from './convert-segment.js';
import { createExportPartProcessor } from './export-part.js';
import { createLoadSnapshotProcessor } from './load-snapshot.js';
import { createNightlyTriggerProcessor } from './nightly-trigger.js';
import { createPublishSnapshotProcessor } from './publish-snapshot.js';

export const jobProcessors: JobProcessors = {
  exportPart: createExportPartProcessor,
  publishSnapshot: createPublishSnapshotProcessor,
  nightlyTrigger: createNightlyTriggerProcessor,
  convertSegment: createConvertSegmentProcessor,
  loadSnapshot: createLoadSnapshotProcessor,
};
