/**
 * The soak check's judgement, on rows and files made up to differ in one way each: a wrong value,
 * an extra row, a duplicate, a lost row, a temp file beside the published ones, a short file,
 * and a snapshot that never published.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  apiRowText,
  compareRowTexts,
  publishedRowText,
  type PublishedColumn,
} from '../../scripts/lib/row-values.js';
import { checkTrial, partialFilesOf } from '../../scripts/soak/check.js';
import { FilingsClient } from '../../src/api/index.js';
import { startTestEmulator } from '../helpers/emulator.js';

const columns: PublishedColumn[] = [
  { name: 'series_key', type: 'VARCHAR', role: 'field' },
  { name: 'value_num', type: 'DECIMAL(38,0)', role: 'field' },
  { name: 'tags', type: 'JSON', role: 'field' },
  { name: 'first_seen', type: 'DATE', role: 'field' },
  { name: '_requested_ticker', type: 'VARCHAR', role: 'lineage' },
  { name: '_extra', type: 'JSON', role: 'extra' },
];
const api = (key: string, value: string): Record<string, unknown> => ({
  series_key: key,
  value_num: value,
  tags: { a: [1, 2] },
  first_seen: '2024-01-31',
  raw_path: 'x/y',
});
/** The same row as DuckDB reads it back from Parquet (JSON-safe objects). */
const published = (key: string, value: string): Record<string, unknown> => ({
  series_key: key,
  value_num: value,
  tags: '{"a":[1,2]}',
  first_seen: '2024-01-31',
  _requested_ticker: 'AAPL',
  _extra: '{"raw_path":"x/y"}',
  _snapshot_id: 's',
});
const keyOf = (text: string): string => {
  const v = JSON.parse(text) as unknown[];
  return `${String(v[0])}|${String(v[1])}`;
};
const want = [api('k1', '10'), api('k2', '20'), api('k3', '30')].map((r) => apiRowText(columns, 'AAPL', r));

describe('soak rows against the API', () => {
  it('an exact copy is 0 lost, 0 extra, 0 duplicated', () => {
    const got = [published('k1', '10'), published('k2', '20'), published('k3', '30')];
    expect(
      compareRowTexts(
        want,
        got.map((r) => publishedRowText(columns, r)),
        keyOf,
      ),
    ).toMatchObject({
      lost: 0,
      extra: 0,
      duplicated: 0,
    });
  });

  it('counts a wrong value (lost and extra), an unknown row, a duplicate and a missing row', () => {
    const got = [
      published('k1', '10'),
      published('k1', '10'), // duplicate of k1
      published('k2', '21'), // wrong value: k2 as the API has it is lost, this one is extra
      published('k9', '90'), // a row the API does not have
    ].map((r) => publishedRowText(columns, r));
    expect(compareRowTexts(want, got, keyOf)).toMatchObject({ lost: 2, extra: 2, duplicated: 1 });
  });

  it('a field the API added that the published _extra lacks is a difference', () => {
    const lacking = { ...published('k1', '10'), _extra: null };
    expect(compareRowTexts(want.slice(0, 1), [publishedRowText(columns, lacking)], keyOf)).toMatchObject({
      lost: 1,
      extra: 1,
    });
  });
});

describe('soak files against the manifest', () => {
  const listed = [{ path: 'series_catalog/snapshot_id=s/part-0.parquet', bytes: 100 }];
  const sizes = new Map([[listed[0]!.path, 100]]);

  it('a published snapshot whose files are all listed and whole has none partial', () => {
    expect(partialFilesOf([listed[0]!.path], listed, sizes)).toEqual([]);
  });

  it('counts a temp file beside the published ones, a short file and a missing one', () => {
    const tmp = 'series_catalog/snapshot_id=s/part-1.parquet.tmp-123';
    const withShort = [...listed, { path: 'issuer_reference/snapshot_id=s/part-0.parquet', bytes: 50 }];
    const onDisk = new Map([...sizes, ['issuer_reference/snapshot_id=s/part-0.parquet', 20]]);
    expect(partialFilesOf([listed[0]!.path, tmp, withShort[1]!.path], withShort, onDisk)).toEqual([
      `not in the manifest: ${tmp}`,
      'listed issuer_reference/snapshot_id=s/part-0.parquet: 50 bytes, on disk 20',
    ]);
    expect(partialFilesOf([], listed, new Map())).toEqual([
      'listed series_catalog/snapshot_id=s/part-0.parquet: 100 bytes, on disk -1',
    ]);
  });

  it('without _SUCCESS every file of the snapshot is partial', () => {
    expect(partialFilesOf([listed[0]!.path], null, new Map())).toHaveLength(1);
  });
});

describe('a trial that did not publish', () => {
  it('is every API row lost, not 0', async () => {
    const emu = await startTestEmulator();
    const outDir = await mkdtemp(join(tmpdir(), 'soak-check-'));
    const client = new FilingsClient({ baseUrl: emu.url, apiKey: emu.apiKey });
    try {
      let apiRowCount = 0;
      for (const ticker of ['AAPL', 'MSFT']) {
        apiRowCount += (await client.call('series/catalog', { ticker } as never)).data.rows.length;
        apiRowCount += (await client.call('issuer/reference', { ticker } as never)).data.rows.length;
      }
      expect(apiRowCount).toBeGreaterThan(2);
      const check = await checkTrial({
        outDir,
        snapshotId: 'never-published',
        datasets: ['series_catalog', 'issuer_reference'],
        companies: ['AAPL', 'MSFT'],
        api: { url: emu.url, key: emu.apiKey },
      });
      expect(check).toMatchObject({ published: false, rowsLost: apiRowCount, rowsExtra: 0, partialFiles: 0 });
      expect(check.details).toContain('not published: every row is lost');
    } finally {
      await client.close();
      await emu.close();
      await rm(outDir, { recursive: true, force: true });
    }
  });
});
