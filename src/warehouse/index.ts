/**
 * Loading published snapshots into a warehouse (DuckDB, PostgreSQL), exactly once: the `load`
 * command and the load job after publish. docs/output.md, "Loading", is the user-facing description.
 */
import { assertNever } from '../types.js';
import { openDuckDbWarehouse, openPostgresWarehouse } from './engines/index.js';
import { parseTarget } from './target.js';
import type { Warehouse } from './warehouse.js';

export {
  loadSnapshots,
  publishedSnapshots,
  type LoadOptions,
  type LoadReport,
  type SnapshotLoad,
  type DatasetLoad,
  type DatasetShrink,
} from './load.js';
export { describeHistory, formatLoadReport } from './report.js';
export { describeShrink } from './shrink.js';
export { parseTarget, redactTarget, targetName, type LoadTarget } from './target.js';
export { LEDGER_TABLE, type LedgerRow, type LoadMode } from './ledger.js';
export type { Warehouse } from './warehouse.js';

export interface OpenWarehouseOptions {
  /** Table schema. @defaultValue `main` (DuckDB), `public` (PostgreSQL) */
  schema?: string;
  /** Scratch files (CSV for COPY). @defaultValue the OS temp dir */
  tmpDir?: string;
}

/** Opens `--into`; fails with one WarehouseError line (unreachable, refused, busy) before any change. */
export async function openWarehouse(into: string, o: OpenWarehouseOptions = {}): Promise<Warehouse> {
  const t = parseTarget(into);
  switch (t.engine) {
    case 'duckdb':
      return openDuckDbWarehouse({ path: t.path, ...(o.schema !== undefined ? { schema: o.schema } : {}) });
    case 'postgres':
      return openPostgresWarehouse({
        url: t.url,
        ...(o.schema !== undefined ? { schema: o.schema } : {}),
        ...(o.tmpDir !== undefined ? { tmpDir: o.tmpDir } : {}),
      });
    default:
      return assertNever(t, 'target');
  }
}
