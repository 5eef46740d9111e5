/**
 * Adapts the output module (src/output) to the processors' ports: part writers that stage one
 * part, and the publisher that builds the snapshot's files, manifest and _SUCCESS. The publisher
 * (DuckDB, ~30 MB of native code) loads on the first publish only: a parts-only worker never
 * carries it, and commands that do not export never load either.
 */
import { join } from 'node:path';
import type { PartWriterFactory, SnapshotPublisher } from './ports.js';

export interface OutputPorts {
  createWriter: PartWriterFactory;
  publish: SnapshotPublisher;
}

export interface OutputPortOptions {
  /** DuckDB memory limit while publishing, MB. @defaultValue the output module's */
  publishMemoryMb?: number;
  /** DuckDB threads while publishing. @defaultValue the output module's */
  publishThreads?: number;
  /** Parquet row-group size in rows. @defaultValue the output module's (DEFAULT_ROW_GROUP_ROWS) */
  rowGroupRows?: number;
}

export async function outputPorts(opts: OutputPortOptions = {}): Promise<OutputPorts> {
  const { createPartWriter } = await import('../output/part-writer.js');
  return {
    createWriter: (req) =>
      createPartWriter({
        root: req.root,
        snapshotId: req.snapshotId,
        dataset: req.dataset,
        ticker: req.ticker,
        lineage: { snapshotId: req.snapshotId, fetchedAt: req.fetchedAt, requestedTicker: req.ticker },
      }),
    publish: async (req) => {
      const { publishSnapshot } = await import('../output/publish.js');
      const manifest = await publishSnapshot({
        root: req.root,
        snapshotId: req.snapshotId,
        snapshotDate: req.snapshotDate,
        formats: req.formats,
        parts: req.parts,
        stats: {
          waits: req.waits,
          startedAt: req.startedAt,
          requests: req.requests,
          retries: req.retries,
          rateLimited429: req.rateLimited429,
        },
        ...(opts.rowGroupRows !== undefined ? { rowGroupRows: opts.rowGroupRows } : {}),
        duckdb: {
          ...(opts.publishMemoryMb !== undefined ? { memoryLimit: `${opts.publishMemoryMb}MB` } : {}),
          ...(opts.publishThreads !== undefined ? { threads: opts.publishThreads } : {}),
        },
      });
      const rows: Record<string, number> = {};
      for (const d of req.datasets) rows[d] = manifest.datasets[d]?.rows ?? 0;
      return { manifestPath: join(req.root, '_snapshots', req.snapshotId, 'manifest.json'), rows };
    },
  };
}
