/**
 * The pipeline: snapshots as BullMQ flows over Redis, from the CLI's request to published files.
 * Sub-folders by role (record/, queue/, part/) under the wiring (context, worker runner, exporter).
 */
// This file is the pipeline's one public face: the CLI (and any other front end), the dashboard and
// the job definitions of jobs/ import only it (.dependency-cruiser.cjs). Commands import it lazily,
// when they run, so that registering them loads only commander.
export { openPipeline, redactUrl, type PipelineContext } from './context.js';
export { openExporter, type Exporter, type OpenExporterOptions } from './exporter.js';
export { serveMetrics, type ServedMetrics } from './metrics-endpoint.js';
export { resultLine, runSnapshot } from './run-snapshot.js';
export { removeNightlySchedule, upsertNightlySchedule } from './schedule.js';
export { buildSnapshotSpec, cancelSnapshot, localDate, nightlySnapshotId } from './queue/index.js';
export {
  dedupe,
  loadUniverse,
  missingCompanies,
  missingDetailLines,
  noneFoundMessage,
  parseCompany,
  pipelineStates,
  readUniverseFile,
  noWorkerStatus,
  totals,
  type Company,
  type DatasetProgress,
  type MissingCompany,
  type SnapshotRecord,
  type SnapshotSpec,
  type SnapshotView,
  type SnapshotStore,
  outageStatus,
  type OutageGuard,
} from './record/index.js';
export { describeKeyBudget, formatStatus, latestUnder, readStatus, statusReport } from './status-view.js';

// What the job definitions of jobs/ build on: the job contract, the helpers every job gets, and
// the steps of a part.
export { defineJob, type DefinedJob, type JobDefinition, type JobDefinitions } from './job-definitions.js';
export type { JobHelpers } from './job-helpers.js';
export { icebergAfterPublish, type IcebergOutcome } from './iceberg-after-publish.js';
export { loadAfterPublish, type LoadedDataset } from './load-after-publish.js';
export {
  CONVERT_PIECE,
  earlyConversionOf,
  EXPORT_PART,
  incrementalPlanner,
  JOB_TYPES,
  LOAD_SNAPSHOT,
  NIGHTLY_TRIGGER,
  parsePartJobId,
  partJobId,
  PUBLISH_SNAPSHOT,
  PieceAnnouncer,
  type EarlyConversion,
  type EnqueueOutcome,
  type IncrementalPlan,
  type ConvertPiecePayload,
  type ExportPartPayload,
  type JobType,
  type LoadSnapshotPayload,
  type NightlyTriggerPayload,
  type PublishSnapshotPayload,
} from './queue/index.js';
export {
  CatalogFingerprint,
  CHANGE_DATASET,
  datasetsToHurry,
  decideReuse,
  failureAction,
  partHurrier,
  putBack,
  retriedByPolicy,
  withBudget,
  type PartFetcher,
  type PartHurrier,
  type PartResponse,
  type PartWriter,
  type PartWriterFactory,
  type RateLimiterLike,
  type ReusePorts,
  type PieceConverter,
  type PieceDiscarder,
  type PieceOutcome,
  type PieceRequest,
  type SnapshotPublisher,
  type StagedPartPorts,
} from './part/index.js';
export { companyKey } from './record/index.js';
