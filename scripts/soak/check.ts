/**
 * What a soak trial proves: the published rows against the API's, read with DuckDB as a
 * warehouse would, value by value (rows lost, extra, duplicated), and the files against the
 * manifest (partial files visible: a data or temp file no manifest lists, a listed file missing or
 * short, data without _SUCCESS). A trial that did not publish lost every row.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { FilingsClient } from '../../src/api/index.js';
import { apiRowText, compareRowTexts, publishedRowText, type PublishedColumn } from '../lib/row-values.js';

export interface TrialCheck {
  /** Whether the snapshot published (its _SUCCESS marker is there). */
  published: boolean;
  /** API rows with no equal published row; every row when the trial did not publish. */
  rowsLost: number;
  /** Published rows equal to no API row (a wrong value, a row the API does not have). */
  rowsExtra: number;
  rowsDuplicated: number;
  partialFiles: number;
  details: string[];
}

interface ManifestShape {
  files: { path: string; bytes: number; dataset: string }[];
  datasets: Record<string, { columns: PublishedColumn[] } | undefined>;
}

/**
 * Partial files a reader could see: with a manifest, every file of the snapshot it does not list
 * (temp files too: a `.tmp` left in a dataset folder is visible to a glob) and every listed file
 * whose size differs; without one, every file of the snapshot.
 */
export function partialFilesOf(
  dataFiles: readonly string[],
  listed: readonly { path: string; bytes: number }[] | null,
  sizeOnDisk: ReadonlyMap<string, number>,
): string[] {
  if (listed === null)
    return dataFiles.length > 0 ? dataFiles.map((f) => `visible without _SUCCESS: ${f}`) : [];
  const names = new Set(listed.map((f) => f.path));
  const out = dataFiles.filter((f) => !names.has(f)).map((f) => `not in the manifest: ${f}`);
  for (const f of listed) {
    const size = sizeOnDisk.get(f.path) ?? -1;
    if (size !== f.bytes) out.push(`listed ${f.path}: ${f.bytes} bytes, on disk ${size}`);
  }
  return out;
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
  const manifest = published
    ? (JSON.parse(await readFile(join(snapDir, 'manifest.json'), 'utf8')) as ManifestShape)
    : null;
  const sizes = new Map<string, number>();
  for (const f of manifest?.files ?? [])
    sizes.set(
      f.path,
      await stat(join(opts.outDir, f.path)).then(
        (st) => st.size,
        () => -1,
      ),
    );
  const partial = partialFilesOf(dataFiles, manifest?.files ?? null, sizes);
  details.push(...partial.slice(0, 5));

  const want = await apiRows(opts, manifest);
  let rowsLost = 0;
  let rowsExtra = 0;
  let rowsDuplicated = 0;
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    for (const ds of opts.datasets) {
      const columns = manifest?.datasets[ds]?.columns ?? [];
      const files = (manifest?.files ?? [])
        .filter((f) => f.dataset === ds)
        .map((f) => join(opts.outDir, f.path));
      const got: string[] = [];
      if (files.length > 0) {
        const list = files.map((f) => `'${f.replace(/'/g, "''")}'`).join(', ');
        const reader = files[0]?.endsWith('.parquet') ? 'read_parquet' : 'read_json_auto';
        const r = await conn.runAndReadAll(`SELECT * FROM ${reader}([${list}])`);
        for (const row of r.getRowObjectsJson() as Record<string, unknown>[])
          got.push(publishedRowText(columns, row));
      }
      const keyIndex = 1 + columns.filter((c) => c.role === 'field').findIndex((c) => c.name === KEY[ds]);
      const keyOf = (text: string): string => {
        const values = JSON.parse(text) as unknown[];
        return `${String(values[0])}|${String(values[keyIndex])}`;
      };
      const c = compareRowTexts(want.get(ds) ?? [], got, keyOf);
      rowsLost += c.lost;
      rowsExtra += c.extra;
      rowsDuplicated += c.duplicated;
      if (c.lost + c.extra + c.duplicated > 0)
        details.push(`${ds}: ${c.lost} lost, ${c.extra} extra, ${c.duplicated} duplicated`, ...c.examples);
    }
  } finally {
    conn.closeSync();
  }
  if (!published) details.push('not published: every row is lost');
  return { published, rowsLost, rowsExtra, rowsDuplicated, partialFiles: partial.length, details };
}

/**
 * The API's rows now (the fault is over), canonical per dataset. Without a manifest there are no
 * published columns to compare values in: each row is then its own canonical form, which no
 * published row matches, so all of them count as lost.
 */
async function apiRows(
  opts: { datasets: string[]; companies: string[]; api: { url: string; key: string } },
  manifest: ManifestShape | null,
): Promise<Map<string, string[]>> {
  const client = new FilingsClient({ baseUrl: opts.api.url, apiKey: opts.api.key });
  const want = new Map<string, string[]>();
  try {
    for (const ds of opts.datasets) {
      const columns = manifest?.datasets[ds]?.columns ?? [];
      const rows: string[] = [];
      for (const c of opts.companies) {
        const scope = /^\d+$/.test(c) ? { cik: c } : { ticker: c };
        const op = ds === 'series_catalog' ? 'series/catalog' : 'issuer/reference';
        const res = await client.call(op, scope as never);
        for (const row of (res.data as { rows?: Record<string, unknown>[] }).rows ?? [])
          rows.push(apiRowText(columns, c, row));
      }
      want.set(ds, rows);
    }
  } finally {
    await client.close();
  }
  return want;
}
