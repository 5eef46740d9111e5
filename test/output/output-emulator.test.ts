/**
 * The output module fed by the real thing: the emulator over HTTP (real SEC data), the real client
 * streaming every dataset through the pipeline's fetcher, part writers, publish. Every value of
 * every published row is compared with what the API returned, column by column, through DuckDB.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilingsClient } from '../../src/api/index.js';
import { NotFoundError } from '../../src/errors.js';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import { createPartWriter, publishSnapshot, verifySnapshot, type Manifest } from '../../src/output/index.js';
import { clientFetcher } from '../../src/pipeline/part/client-fetcher.js';
import { parseCompany } from '../../src/pipeline/record/universe.js';
import { readFile } from 'node:fs/promises';
import { fieldsSidecarPath } from '../../src/output/staged-part/index.js';
import { readFieldsSidecar } from '../../src/output/staged-part/sidecar.js';
import { DATASETS, RowText, type DatasetName, type PartPointer } from '../../src/types.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

type Row = Record<string, unknown>;
const SNAP = 'emu-2026-11-21';
const TICKERS = ['MSFT', 'META', 'BRK-B', 'NOPE'];

let emu: TestEmulator;
let client: FilingsClient;
let duck: DuckSession;
let root: string;
let manifest: Manifest;
/** What the API returned, per dataset and ticker. */
const api = new Map<string, Row[]>();

beforeAll(async () => {
  emu = await startTestEmulator();
  client = new FilingsClient({ baseUrl: emu.url, apiKey: emu.apiKey });
  duck = await openDuck({ threads: 1 });
  root = await mkdtemp(join(tmpdir(), 'fx-output-emulator-'));
  const fetcher = clientFetcher(client);
  const parts: PartPointer[] = [];
  for (const dataset of DATASETS) {
    for (const ticker of TICKERS) {
      const fetchedAt = new Date().toISOString();
      try {
        const res = await fetcher.fetch(dataset, parseCompany(ticker, 'test'));
        const w = createPartWriter({
          root,
          snapshotId: SNAP,
          dataset,
          ticker,
          lineage: { snapshotId: SNAP, fetchedAt, requestedTicker: ticker },
        });
        const seen: Row[] = [];
        for await (const row of res.rows) {
          seen.push(row);
          const wait = w.write(row);
          if (wait) await wait;
        }
        api.set(`${dataset}/${ticker}`, seen);
        parts.push({ dataset, ticker, status: 'done', ...(await w.finish()) });
      } catch (err: unknown) {
        if (!(err instanceof NotFoundError)) throw err;
        parts.push({ dataset, ticker, status: 'not_found', rows: 0, bytes: 0, message: err.message });
      }
    }
  }
  manifest = await publishSnapshot({
    root,
    snapshotId: SNAP,
    snapshotDate: '2026-11-21',
    formats: ['parquet', 'ndjson'],
    parts,
  });
}, 120_000);

afterAll(async () => {
  duck?.close();
  await client?.close();
  await emu?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** An output value (DuckDB JSON rendering) against the API's value for the column's type. */
function same(type: string, out: unknown, given: unknown): boolean {
  if (given === undefined || given === null) return out === null;
  switch (type) {
    case 'JSON':
      return JSON.stringify(JSON.parse(String(out))) === JSON.stringify(given);
    case 'BIGINT':
    case 'DECIMAL(38,0)':
      return String(out) === String(given);
    case 'VARCHAR':
      return out === (typeof given === 'string' ? given : JSON.stringify(given));
    default:
      return JSON.stringify(out) === JSON.stringify(given);
  }
}

describe('published snapshot of emulator responses', () => {
  it('records the unknown company as not_found and every dataset with the API row counts', () => {
    expect(manifest.parts.filter((p) => p.ticker === 'NOPE').map((p) => p.status)).toEqual(
      DATASETS.map(() => 'not_found'),
    );
    for (const dataset of DATASETS) {
      const expected = TICKERS.reduce((s, t) => s + (api.get(`${dataset}/${t}`)?.length ?? 0), 0);
      expect({ dataset, rows: manifest.datasets[dataset]?.rows }).toEqual({ dataset, rows: expected });
    }
    expect(manifest.datasets.facts_full?.rows).toBeGreaterThan(2000);
    // The interface hides the raw axis/member path field of facts/full: it is kept, in _extra.
    expect(manifest.datasets.facts_full?.extra_fields.length).toBeGreaterThan(0);
    expect(manifest.warnings).toEqual([]);
  });

  it("infers the catalogs' columns from the rows the API returned", () => {
    const types = (d: DatasetName) =>
      Object.fromEntries(manifest.datasets[d]!.columns.map((c) => [c.name, c.type]));
    expect(manifest.datasets.series_catalog?.schema_inferred).toBe(true);
    expect(types('series_catalog')).toMatchObject({
      series_key: 'VARCHAR',
      observation_count: 'BIGINT',
      first_period_end: 'DATE',
      axis_types: 'VARCHAR[]',
      is_consolidated: 'BOOLEAN',
    });
    expect(types('dims_catalog')).toMatchObject({
      dims_key: 'VARCHAR',
      members: 'JSON',
      is_geographic_like: 'BOOLEAN',
    });
    for (const d of ['series_catalog', 'dims_catalog'] as const) {
      const names = new Set(
        TICKERS.flatMap((t) => (api.get(`${d}/${t}`) ?? []).flatMap((r) => Object.keys(r))),
      );
      expect(
        manifest.datasets[d]!.columns.filter((c) => c.role === 'field')
          .map((c) => c.name)
          .sort(),
      ).toEqual([...names].sort());
    }
  });

  it('every value of every row equals what the API returned', async () => {
    for (const dataset of DATASETS) {
      const ds = manifest.datasets[dataset];
      if (ds === undefined || ds.rows === 0) continue;
      const fields = ds.columns.filter((c) => c.role === 'field');
      const known = new Set(fields.map((c) => c.name));
      const out = await duck.all(
        `SELECT * FROM read_parquet('${root}/${dataset}/*/*/*.parquet', hive_partitioning = true) ORDER BY _requested_ticker`,
      );
      const given = TICKERS.flatMap((t) => (api.get(`${dataset}/${t}`) ?? []).map((r) => ({ t, r })));
      // Rows keep their order within a company (files are written in ticker order).
      expect(out.map((o) => o._requested_ticker)).toEqual(given.map((g) => g.t).sort());
      const byTicker = new Map<string, Row[]>();
      for (const o of out)
        byTicker.set(String(o._requested_ticker), [...(byTicker.get(String(o._requested_ticker)) ?? []), o]);
      let compared = 0;
      for (const t of TICKERS) {
        const rows = api.get(`${dataset}/${t}`) ?? [];
        const outRows = byTicker.get(t) ?? [];
        expect(outRows.length).toBe(rows.length);
        rows.forEach((r, i) => {
          const o = outRows[i]!;
          for (const c of fields) {
            if (!same(c.type, o[c.name], r[c.name])) {
              throw new Error(
                `${dataset}/${t} row ${i} ${c.name}: output ${JSON.stringify(o[c.name])} != API ${JSON.stringify(r[c.name])}`,
              );
            }
          }
          const extra = Object.fromEntries(Object.entries(r).filter(([k, v]) => !known.has(k) && v !== null));
          expect(o._extra === null ? {} : JSON.parse(String(o._extra))).toEqual(extra);
          expect(o.snapshot_id).toBe(SNAP);
          compared++;
        });
      }
      expect(compared).toBe(ds.rows);
    }
  });

  it('verify passes: hashes, counts, schema, value_num = value_scaled_int x 10^scale on real SEC values', async () => {
    const report = await verifySnapshot(root, SNAP);
    expect(report.problems).toEqual([]);
    expect(report.files.filter((f) => !f.ok)).toEqual([]);
    expect(report.ok).toBe(true);
    const factRows = (['facts_full', 'facts_core', 'facts_latest'] as DatasetName[]).reduce(
      (s, d) => s + (manifest.datasets[d]?.rows ?? 0),
      0,
    );
    expect(report.valuesChecked).toBe(2 * factRows);
  });
});

describe('staging without parsing the rows (RowStream.compactRows)', () => {
  /** One part staged from a fresh response: its bytes, sidecar (less the staging id) and unparsed rows. */
  async function stage(dataset: DatasetName, ticker: string, compact: boolean) {
    const res = await clientFetcher(client).fetch(dataset, parseCompany(ticker, 'test'));
    const snapshotId = 'emu-staged';
    // The same lineage both ways (so the same suffix), under two roots.
    const under = join(root, compact ? 'compact' : 'parsed');
    const w = createPartWriter({
      root: under,
      snapshotId,
      dataset,
      ticker,
      lineage: { snapshotId, fetchedAt: '2026-11-26T10:00:00.000Z', requestedTicker: ticker },
    });
    let unparsed = 0;
    for await (const row of compact ? res.compactRows! : res.rows) {
      if (row instanceof RowText) unparsed++;
      const wait = row instanceof RowText ? w.writeText(row) : w.write(row, res.rawText?.(row));
      if (wait) await wait;
    }
    const part = await w.finish();
    const bytes = await readFile(join(under, part.file));
    const { stagingId, ...sidecar } = (await readFieldsSidecar(fieldsSidecarPath(join(under, part.file))))!;
    expect(stagingId).toBe(w.stagingId);
    return { bytes, sidecar, unparsed, rows: part.rows };
  }

  it('stages the bundled AAPL facts_full and evidence to the same lines and field lists', async () => {
    for (const dataset of ['facts_full', 'evidence'] as const) {
      const parsed = await stage(dataset, 'AAPL', false);
      const unparsed = await stage(dataset, 'AAPL', true);
      expect(parsed.unparsed).toBe(0);
      // Most rows never parsed; the rest (batch edges, rows the scanner turns down) parsed as before.
      expect(unparsed.unparsed).toBeGreaterThan(parsed.rows / 2);
      expect(unparsed.rows).toBe(parsed.rows);
      expect(unparsed.bytes.equals(parsed.bytes)).toBe(true);
      expect(unparsed.sidecar).toEqual(parsed.sidecar);
    }
  });
});
