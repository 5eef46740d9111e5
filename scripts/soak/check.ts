/**
 * What a soak trial proves: the published rows against the API's, read with DuckDB as a
 * warehouse would (rows lost, rows duplicated), and the files against the manifest (partial files
 * visible: a data file no manifest lists, a listed file missing or short, data without _SUCCESS).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { FilingsClient } from '../../src/api/index.js';

export interface TrialCheck {
  rowsLost: number;
  rowsDuplicated: number;
  partialFiles: number;
  details: string[];
}

/** The key that identifies a row of a dataset (its grain). */
const KEY: Record<string, string> = { series_catalog: 'series_key', issuer_reference: 'cik' };

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else out.push(p);
  }
  return out;
}

export async function checkTrial(opts: {
  outDir: string;
  snapshotId: string;
  datasets: string[];
  companies: string[];
  api: { url: string; key: string };
}): Promise<TrialCheck> {
  const details: string[] = [];
  const snapDir = join(opts.outDir, '_snapshots', opts.snapshotId);
  const published = await stat(join(snapDir, '_SUCCESS')).then(
    () => true,
    () => false,
  );
  // Files of this snapshot under the dataset folders (staging excluded).
  const dataFiles = (await walk(opts.outDir))
    .map((f) => relative(opts.outDir, f))
    .filter((f) => f.includes(`snapshot_id=${opts.snapshotId}/`) && !f.startsWith('_'));
  let partialFiles = 0;
  let listed: { path: string; bytes: number; dataset: string }[] = [];
  if (published) {
    const manifest = JSON.parse(await readFile(join(snapDir, 'manifest.json'), 'utf8')) as {
      files: { path: string; bytes: number; dataset: string }[];
    };
    listed = manifest.files;
    const names = new Set(listed.map((f) => f.path));
    for (const f of dataFiles)
      if (!names.has(f) && !f.includes('.tmp')) {
        partialFiles++;
        details.push(`not in the manifest: ${f}`);
      }
    for (const f of listed) {
      const size = await stat(join(opts.outDir, f.path)).then(
        (s) => s.size,
        () => -1,
      );
      if (size !== f.bytes) {
        partialFiles++;
        details.push(`listed ${f.path}: ${f.bytes} bytes, on disk ${size}`);
      }
    }
  } else if (dataFiles.length > 0) {
    partialFiles += dataFiles.length;
    details.push(`${dataFiles.length} data files visible without _SUCCESS`);
  }

  // The API's rows now (the fault is over), key by key.
  const client = new FilingsClient({ baseUrl: opts.api.url, apiKey: opts.api.key });
  const want = new Map<string, Set<string>>();
  try {
    for (const ds of opts.datasets) {
      const keys = new Set<string>();
      for (const c of opts.companies) {
        const scope = /^\d+$/.test(c) ? { cik: c } : { ticker: c };
        const op = ds === 'series_catalog' ? 'series/catalog' : 'issuer/reference';
        const res = await client.call(op, scope as never);
        for (const row of (res.data as { rows?: Record<string, unknown>[] }).rows ?? [])
          keys.add(`${c}|${String(row[KEY[ds] ?? 'id'])}`);
      }
      want.set(ds, keys);
    }
  } finally {
    await client.close();
  }

  let rowsLost = 0;
  let rowsDuplicated = 0;
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    for (const ds of opts.datasets) {
      const files = listed.filter((f) => f.dataset === ds).map((f) => join(opts.outDir, f.path));
      const got: string[] = [];
      if (files.length > 0) {
        const list = files.map((f) => `'${f.replace(/'/g, "''")}'`).join(', ');
        const reader = files[0]?.endsWith('.parquet') ? 'read_parquet' : 'read_json_auto';
        const r = await conn.runAndReadAll(
          `SELECT _requested_ticker || '|' || CAST(${KEY[ds] ?? 'id'} AS VARCHAR) AS k FROM ${reader}([${list}])`,
        );
        for (const row of r.getRowObjects()) got.push(String(row.k));
      }
      const keys = want.get(ds) ?? new Set();
      const seen = new Set(got);
      rowsDuplicated += got.length - seen.size;
      for (const k of keys) if (!seen.has(k)) rowsLost++;
      if (got.length - seen.size > 0) details.push(`${ds}: ${got.length - seen.size} duplicated rows`);
    }
  } finally {
    conn.closeSync();
  }
  if (!published) details.push('not published');
  return { rowsLost: published ? rowsLost : 0, rowsDuplicated, partialFiles, details };
}
