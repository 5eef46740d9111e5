/**
 * A bounded DuckDB session: the engine that converts staged NDJSON into typed Parquet, re-reads
 * files for verify, and checks DDL. In-process, threads and memory capped, spills to a temp dir.
 */
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { mkdir } from 'node:fs/promises';
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import type { ColumnDef } from '../../datasets/index.js';
import { columnFieldIds } from '../iceberg/index.js';

export interface DuckDbOptions {
  /** Worker threads. @defaultValue min(2, CPU count) */
  threads?: number;
  /** DuckDB memory_limit (e.g. `512MB`). Peak RSS stays near it plus the Node heap. @defaultValue `512MB` */
  memoryLimit?: string;
  /** Where DuckDB may spill; none when undefined. */
  tempDirectory?: string;
  /**
   * Hand memory the engine frees back to the system at once (DuckDB's
   * `allocator_bulk_deallocation_flush_threshold` at RELEASE_FREED_THRESHOLD instead of its 512 MB):
   * a conversion's peak RSS ~25–30 MB lower for ~20 % more of its CPU. For a process whose other
   * roles need that memory at the same time (`run --local`, docs/decisions.md). @defaultValue false
   */
  releaseFreedMemory?: boolean;
}

/**
 * Bulk frees at least this large are returned to the system at once with releaseFreedMemory. 4 MB
 * and more left a staged part's piece's peak where it was; 0 cost more CPU than 1 MB for the same peak.
 */
export const RELEASE_FREED_THRESHOLD = '1MiB';

/** The Parquet codecs the output writes. */
export type ParquetCompression = 'zstd' | 'snappy';

/**
 * zstd level of every Parquet file the output writes: DuckDB's default, stated so a new DuckDB cannot
 * change it under reused files. Level 1 encoded SYNBIG's 1,000,000 facts rows ~17 % faster but 18 %
 * larger (69.9 MB against 59.3 MB), a cost every reader pays on every scan (docs/decisions.md,
 * "Parquet at zstd level 3, stated once"). Only the codec is in a file's footer, not the level.
 */
export const ZSTD_LEVEL = 3;

/**
 * The COPY option writing the Iceberg table's field ids of `columns` into the Parquet footer
 * (DuckDB's FIELD_IDS; a list's element is `element`), so a reader resolves columns by id, as the
 * spec prefers, not by name.
 */
export function parquetFieldIds(columns: readonly Pick<ColumnDef, 'name' | 'type' | 'role'>[]): string {
  const ids = columnFieldIds(columns).map(
    (f) =>
      `${sqlIdent(f.name)}: ${f.elementId === undefined ? f.id : `{__duckdb_field_id: ${f.id}, element: ${f.elementId}}`}`,
  );
  return `FIELD_IDS {${ids.join(', ')}}`;
}

/** The COPY options choosing the codec (and zstd's level), e.g. `COMPRESSION zstd, COMPRESSION_LEVEL 1`. */
export function parquetCodec(compression: ParquetCompression): string {
  switch (compression) {
    case 'zstd':
      return `COMPRESSION zstd, COMPRESSION_LEVEL ${ZSTD_LEVEL}`;
    case 'snappy':
      return 'COMPRESSION snappy';
    default: {
      const never: never = compression;
      throw new Error(`unknown Parquet compression ${String(never)}`);
    }
  }
}

export interface DuckSession {
  run(sql: string): Promise<void>;
  /** Rows as JSON-safe objects (DECIMAL and BIGINT as strings, dates as ISO strings). */
  all(sql: string): Promise<Record<string, unknown>[]>;
  close(): void;
}

export async function openDuck(opts: DuckDbOptions = {}): Promise<DuckSession> {
  const threads = opts.threads ?? Math.max(1, Math.min(2, cpus().length));
  const config: Record<string, string> = {
    threads: String(threads),
    memory_limit: opts.memoryLimit ?? '512MB',
    preserve_insertion_order: 'true',
    // Without the ICU extension (not bundled) DuckDB handles TIMESTAMPTZ in UTC, which is what we want.
    // Output files are written by COPY only; autoload/autoinstall of extensions is not needed.
    autoinstall_known_extensions: 'false',
  };
  if (opts.tempDirectory !== undefined) {
    config.temp_directory = opts.tempDirectory;
    // DuckDB creates the folder only when it first spills, and not its parents: a session whose
    // folder sits inside another's (publish's lanes and `changes`) failed its first spill.
    await mkdir(dirname(opts.tempDirectory), { recursive: true });
  }
  if (opts.releaseFreedMemory === true)
    config.allocator_bulk_deallocation_flush_threshold = RELEASE_FREED_THRESHOLD;
  const instance = await DuckDBInstance.create(':memory:', config);
  let conn: DuckDBConnection;
  try {
    conn = await instance.connect();
  } catch (err: unknown) {
    instance.closeSync();
    throw err;
  }
  let closed = false;
  return {
    async run(sql) {
      await conn.run(sql);
    },
    async all(sql) {
      const reader = await conn.runAndReadAll(sql);
      return reader.getRowObjectsJson() as Record<string, unknown>[];
    },
    close() {
      if (closed) return;
      closed = true;
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/** A SQL string literal. */
export function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** A SQL identifier (column names come from API rows: quote them all). */
export function sqlIdent(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

/** A list of file paths as a SQL list literal. */
export function sqlPathList(paths: readonly string[]): string {
  return `[${paths.map(sqlString).join(', ')}]`;
}
