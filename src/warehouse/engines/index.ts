/**
 * The load targets: one module per engine implementing the `Warehouse` port (../warehouse.ts),
 * opened by `openWarehouse` (../index.ts) from the `--into` form `target.ts` parsed.
 */
export { openDuckDbWarehouse, type DuckDbWarehouseOptions } from './duckdb-warehouse.js';
export { openPostgresWarehouse } from './postgres-warehouse.js';
