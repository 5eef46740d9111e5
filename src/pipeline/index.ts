/**
 * The pipeline's entry point: what the CLI (and any other front end) may use. Commands import it
 * lazily, when they run, so that registering them loads only commander.
 */
export { effectiveRate } from '../budget/index.js';
export { checkAnyOutputRoot, checkOutputRoot } from '../output/staging/index.js';
export { s3Settings } from '../output/storage/index.js';
export {
  annualRevenueSql,
  annualRevenueTableSql,
  DEMO_METRIC,
  groupDigits,
  queryAnnualRevenue,
  queryAnnualRevenueTable,
} from './demo-query.js';
export { budgetConfigFrom, openPipeline, redactUrl, type PipelineContext } from './context.js';
export { openExporter, type Exporter, type OpenExporterOptions } from './exporter.js';
export { serveMetrics, type ServedMetrics } from './metrics-endpoint.js';
export type { JobProcessors } from './job-processors.js';
export { resultLine, runSnapshot } from './run-snapshot.js';
export { removeNightlySchedule, upsertNightlySchedule } from './schedule.js';
export { buildSnapshotSpec } from './snapshot-request.js';
export { totals, type SnapshotRecord, type SnapshotSpec } from './snapshot-store.js';
export { outageStatus } from './outage.js';
export { pipelineStates } from './retention-states.js';
export { describeKeyBudget, formatStatus, statusReport } from './status-view.js';
export { dedupe, loadUniverse, parseCompany, readUniverseFile, type Company } from './universe.js';
