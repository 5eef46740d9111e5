/**
 * Output (issue 6): facts rows → typed Parquet through the project's path, against DuckDB
 * converting the same staged rows with the notes' plain command, in the same run. Each phase runs
 * in its own child process so its peak RSS (process.resourceUsage().maxRSS) is its own:
 *
 * - write: JS row objects → createPartWriter (gzip NDJSON staging), generation excluded;
 * - publish: publishSnapshot → sized, typed, zstd Parquet with `_extra`, hashes, fsync, manifest;
 * - duckdb: `COPY (SELECT * FROM read_ndjson(<same staged files>, columns = {explicit types}))
 *   TO … (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)` (docs/notes baseline);
 * - hyparquet: hyparquet-writer 0.17 (pure JS, the alternative measured for docs/decisions.md),
 *   streaming row groups of 100k from the same row objects, when installed.
 *
 * OUTPUT_BENCH_ROWS sets the row count (default 500000), OUTPUT_BENCH_RUNS the publish/baseline
 * rounds (default 3, alternating, medians reported).
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createPartWriter,
  DEFAULT_ROW_GROUP_ROWS,
  openDuck,
  publishSnapshot,
  sqlPathList,
  sqlString,
} from '../src/output/index.js';
import { FACT_COLUMNS } from '../src/datasets/index.js';
import { syntheticFactRow } from '../test/helpers/synthetic-rows.js';
import type { PartPointer } from '../src/types.js';
import { runBenchChild } from './support/child-process.js';
import type { BenchResult } from './support/types.js';
import { counted } from '../src/counted.js';

const CHILD_FLAG = '--output-bench-child';
const MARK = 'OUTPUT_BENCH_RESULT ';
const PARTS = 8;
const BATCH = 10_000;
const SNAPSHOT = 'bench-output';
const RUNS = Number(process.env.OUTPUT_BENCH_RUNS ?? 3);

/** The run with the median time (its RSS comes with it); peak RSS is the max over runs. */
function medianBy(runs: ChildResult[]): ChildResult {
  const sorted = [...runs].sort((a, b) => a.ms - b.ms);
  const mid = sorted[Math.floor(sorted.length / 2)]!;
  return { ...mid, maxRssMb: Math.max(...runs.map((r) => r.maxRssMb)) };
}

interface ChildResult {
  ms: number;
  maxRssMb: number;
  bytes?: number;
  files?: number;
  note?: string;
}

function rss(): number {
  return process.resourceUsage().maxRSS / 1024;
}

function tickerOf(p: number): string {
  return `T${String(p).padStart(3, '0')}`;
}

async function childWrite(dir: string, rows: number): Promise<ChildResult> {
  const pointers: PartPointer[] = [];
  let ms = 0;
  let bytes = 0;
  const per = Math.ceil(rows / PARTS);
  for (let p = 0; p < PARTS; p++) {
    const ticker = tickerOf(p);
    const company = { cik: String(1000 + p).padStart(10, '0'), ticker };
    const w = createPartWriter({
      root: dir,
      snapshotId: SNAPSHOT,
      dataset: 'facts_full',
      ticker,
      lineage: { snapshotId: SNAPSHOT, fetchedAt: '2026-11-21T00:00:00.000Z', requestedTicker: ticker },
    });
    const n = Math.min(per, rows - p * per);
    for (let start = 0; start < n; start += BATCH) {
      const batch: Record<string, unknown>[] = [];
      for (let i = start; i < Math.min(n, start + BATCH); i++)
        batch.push(syntheticFactRow(p * per + i, company));
      const t0 = performance.now();
      for (const row of batch) {
        const wait = w.write(row);
        if (wait) await wait;
      }
      ms += performance.now() - t0;
    }
    const t0 = performance.now();
    const staged = await w.finish();
    ms += performance.now() - t0;
    bytes += staged.bytes;
    pointers.push({ dataset: 'facts_full', ticker, status: 'done', ...staged });
  }
  await writeFile(join(dir, 'pointers.json'), JSON.stringify(pointers));
  return { ms, maxRssMb: rss(), bytes };
}

/** The same generation as childWrite without writing: its RSS is the floor the writer adds to. */
async function childGenerate(rows: number): Promise<ChildResult> {
  const per = Math.ceil(rows / PARTS);
  let keep = 0;
  const t0 = performance.now();
  for (let p = 0; p < PARTS; p++) {
    const company = { cik: String(1000 + p).padStart(10, '0'), ticker: tickerOf(p) };
    const n = Math.min(per, rows - p * per);
    for (let start = 0; start < n; start += BATCH) {
      const batch: Record<string, unknown>[] = [];
      for (let i = start; i < Math.min(n, start + BATCH); i++)
        batch.push(syntheticFactRow(p * per + i, company));
      keep += batch.length;
    }
  }
  return { ms: performance.now() - t0, maxRssMb: rss(), note: String(keep) };
}

async function childPublish(dir: string): Promise<ChildResult> {
  const parts = JSON.parse(await readFile(join(dir, 'pointers.json'), 'utf8')) as PartPointer[];
  for (const d of ['facts_full', '_snapshots', '_schemas'])
    await rm(join(dir, d), { recursive: true, force: true });
  const t0 = performance.now();
  const m = await publishSnapshot({
    root: dir,
    snapshotId: SNAPSHOT,
    snapshotDate: '2026-11-21',
    formats: ['parquet'],
    parts,
    keepStaging: true,
  });
  return { ms: performance.now() - t0, maxRssMb: rss(), bytes: m.totals.bytes, files: m.totals.files };
}

/** The notes' baseline: DuckDB reading the staged NDJSON with explicit column types. */
async function childDuckdb(dir: string, untyped = false): Promise<ChildResult> {
  const parts = JSON.parse(await readFile(join(dir, 'pointers.json'), 'utf8')) as PartPointer[];
  const files = parts.map((p) => join(dir, p.file ?? ''));
  const columns = [
    ...FACT_COLUMNS.filter((c) => c.role === 'field').map(
      (c) => `${sqlString(c.name)}: '${untyped && c.type !== 'VARCHAR[]' ? 'VARCHAR' : c.type}'`,
    ),
    `'axis_member_path': 'JSON'`,
    `'_snapshot_id': 'VARCHAR'`,
    `'_fetched_at': 'TIMESTAMPTZ'`,
    `'_requested_ticker': 'VARCHAR'`,
  ].join(', ');
  const out = join(dir, 'baseline.parquet');
  const duck = await openDuck();
  try {
    const t0 = performance.now();
    await duck.run(
      `COPY (SELECT * FROM read_ndjson(${sqlPathList(files)}, columns = {${columns}}, format = 'newline_delimited', compression = 'gzip')) TO ${sqlString(out)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 100000)`,
    );
    return { ms: performance.now() - t0, maxRssMb: rss(), bytes: (await stat(out)).size };
  } finally {
    duck.close();
  }
}

/** hyparquet-writer, row groups of 100k rows, from the same row objects (conversion timed, generation not). */
async function childHyparquet(dir: string, rows: number): Promise<ChildResult> {
  const hp = (await import('hyparquet-writer')) as unknown as {
    ParquetWriter: new (o: { writer: unknown; schema: unknown[]; codec?: string }) => {
      write(o: {
        columnData: { name: string; data: unknown[] }[];
        rowGroupSize?: number;
      }): void | Promise<void>;
      finish(): void | Promise<void>;
    };
    fileWriter(path: string): unknown;
  };
  const out = join(dir, 'hyparquet.parquet');
  const fields = FACT_COLUMNS.filter((c) => c.role === 'field');
  const schema: Record<string, unknown>[] = [{ name: 'root', num_children: fields.length }];
  const opt = { repetition_type: 'OPTIONAL' };
  const element = (name: string, type: string): Record<string, unknown> => {
    if (type === 'DECIMAL(38,0)') {
      return {
        name,
        type: 'FIXED_LEN_BYTE_ARRAY',
        type_length: 16,
        converted_type: 'DECIMAL',
        precision: 38,
        scale: 0,
        ...opt,
      };
    }
    if (type === 'DATE') return { name, type: 'INT32', converted_type: 'DATE', ...opt };
    if (type === 'INTEGER') return { name, type: 'INT32', ...opt };
    if (type === 'BOOLEAN') return { name, type: 'BOOLEAN', ...opt };
    // Lists as JSON text here: hyparquet's nested LIST path needs a per-column schema tree.
    if (type === 'VARCHAR[]') return { name, type: 'BYTE_ARRAY', converted_type: 'JSON', ...opt };
    return { name, type: 'BYTE_ARRAY', converted_type: 'UTF8', ...opt };
  };
  for (const c of fields) schema.push(element(c.name, c.type));
  const writer = new hp.ParquetWriter({ writer: hp.fileWriter(out), schema });
  const dayMs = 86_400_000;
  let ms = 0;
  for (let start = 0; start < rows; start += 100_000) {
    const batch: Record<string, unknown>[] = [];
    for (let i = start; i < Math.min(rows, start + 100_000); i++)
      batch.push(syntheticFactRow(i, { cik: '0000001000', ticker: 'T' }));
    const t0 = performance.now();
    const columnData = fields.map((c) => ({
      name: c.name,
      data: batch.map((r) => {
        const v = r[c.name];
        if (v === null || v === undefined) return null;
        if (c.type === 'DECIMAL(38,0)') return BigInt(v as string);
        if (c.type === 'DATE') return Date.parse(`${v as string}T00:00:00Z`) / dayMs;
        return v;
      }),
    }));
    await writer.write({ columnData, rowGroupSize: 100_000 });
    ms += performance.now() - t0;
  }
  const t0 = performance.now();
  await writer.finish();
  ms += performance.now() - t0;
  // Exactness check: DuckDB reads it back, and a value beyond 2^53 survives.
  const duck = await openDuck();
  try {
    const r = await duck.all(
      `SELECT count(*)::BIGINT AS n, max(value_scaled_int)::VARCHAR AS hi, typeof(max(value_scaled_int)) AS t FROM read_parquet(${sqlString(out)})`,
    );
    return {
      ms,
      maxRssMb: rss(),
      bytes: (await stat(out)).size,
      note: `DuckDB reads ${String(r[0]?.n)} rows, max value_scaled_int ${String(r[0]?.hi)} as ${String(r[0]?.t)}`,
    };
  } finally {
    duck.close();
  }
}

async function childMain(): Promise<void> {
  const arg = JSON.parse(process.argv[process.argv.indexOf(CHILD_FLAG) + 1] ?? '{}') as {
    phase: string;
    dir: string;
    rows: number;
  };
  const phases: Record<string, () => Promise<ChildResult>> = {
    write: () => childWrite(arg.dir, arg.rows),
    generate: () => childGenerate(arg.rows),
    publish: () => childPublish(arg.dir),
    duckdb: () => childDuckdb(arg.dir),
    'duckdb-untyped': () => childDuckdb(arg.dir, true),
    hyparquet: () => childHyparquet(arg.dir, arg.rows),
  };
  const phase = phases[arg.phase];
  if (phase === undefined) throw new Error(`unknown bench phase ${arg.phase}`);
  const result = await phase();
  process.stdout.write(`${MARK}${JSON.stringify(result)}\n`);
}

function runChild(phase: string, dir: string, rows: number): Promise<ChildResult> {
  const arg = { phase, dir, rows };
  return runBenchChild<ChildResult>({
    file: fileURLToPath(import.meta.url),
    flag: CHILD_FLAG,
    mark: MARK,
    arg,
  });
}

export async function run(): Promise<BenchResult[]> {
  const rows = Number(process.env.OUTPUT_BENCH_ROWS ?? 500_000);
  const dir = await mkdtemp(join(tmpdir(), 'fx-output-bench-'));
  const g = 'output';
  try {
    const generate = await runChild('generate', dir, rows);
    const write = await runChild('write', dir, rows);
    // Publish and the baseline alternate, median of RUNS each: the box is shared and noisy.
    const publishes: ChildResult[] = [];
    const baselines: ChildResult[] = [];
    for (let i = 0; i < RUNS; i++) {
      publishes.push(await runChild('publish', dir, rows));
      baselines.push(await runChild('duckdb', dir, rows));
    }
    const publish = medianBy(publishes);
    const duck = medianBy(baselines);
    const untyped = await runChild('duckdb-untyped', dir, rows);
    let hyp: ChildResult | undefined;
    let hypError: string | undefined;
    try {
      hyp = await runChild('hyparquet', dir, rows);
    } catch (err: unknown) {
      hypError = String(err).slice(0, 120);
    }
    const rps = (r: ChildResult): number => rows / (r.ms / 1000);
    const mb = (b: number | undefined): string => `${((b ?? 0) / 1024 / 1024).toFixed(0)} MB`;
    const ratioPublish = rps(publish) / rps(duck);
    const endToEnd = rows / ((write.ms + publish.ms) / 1000);
    const out: BenchResult[] = [
      {
        group: g,
        name: `part writer: rows -> staged gzip NDJSON (${rows} facts rows)`,
        value: rps(write),
        unit: 'rows/s',
        note: `${mb(write.bytes)} staged, ${PARTS} parts`,
      },
      {
        group: g,
        name: 'part writer peak RSS over row generation alone',
        value: write.maxRssMb - generate.maxRssMb,
        unit: 'MB',
        target: '< 64',
        ok: write.maxRssMb - generate.maxRssMb < 64,
        note: `${write.maxRssMb.toFixed(0)} MB with the generator vs ${generate.maxRssMb.toFixed(0)} MB generating only`,
      },
      {
        group: g,
        name: 'publish: staged NDJSON -> typed zstd Parquet',
        value: rps(publish),
        unit: 'rows/s',
        note: `${counted(publish.files ?? 0, 'file')}, ${mb(publish.bytes)}; incl. _extra, hashes, fsync, manifest`,
      },
      {
        group: g,
        name: 'DuckDB baseline: read_ndjson(explicit types) -> Parquet',
        value: rps(duck),
        unit: 'rows/s',
        note: `same staged files, ${mb(duck.bytes)}, 2 threads; median of ${RUNS}`,
      },
      {
        group: g,
        name: 'DuckDB untyped (text columns) -> Parquet, for reference',
        value: rps(untyped),
        unit: 'rows/s',
        note: `no DECIMAL/DATE/BOOLEAN casts: the floor of any typed conversion, ${mb(untyped.bytes)}`,
      },
      {
        group: g,
        name: 'publish vs DuckDB baseline',
        value: ratioPublish,
        unit: 'ratio',
        target: '>= 0.5',
        ok: ratioPublish >= 0.5,
      },
      {
        group: g,
        name: 'end to end (write + publish) vs DuckDB baseline',
        value: endToEnd / rps(duck),
        unit: 'ratio',
        target: '>= 0.5',
        ok: endToEnd / rps(duck) >= 0.5,
        note: `${endToEnd.toFixed(0)} rows/s from JS objects to published Parquet`,
      },
      {
        group: g,
        name: 'publish peak RSS',
        value: publish.maxRssMb,
        unit: 'MB',
        target: '< 256',
        ok: publish.maxRssMb < 256,
        note: `1 DuckDB thread, row groups of ${DEFAULT_ROW_GROUP_ROWS} rows; max of ${RUNS} runs`,
      },
      { group: g, name: 'DuckDB baseline peak RSS', value: duck.maxRssMb, unit: 'MB' },
    ];
    if (hyp !== undefined) {
      out.push(
        {
          group: g,
          name: 'hyparquet-writer 0.17 (snappy, JS objects -> Parquet)',
          value: rps(hyp),
          unit: 'rows/s',
          note: `${mb(hyp.bytes)}; ${hyp.note ?? ''}`,
        },
        {
          group: g,
          name: 'hyparquet-writer peak RSS',
          value: hyp.maxRssMb,
          unit: 'MB',
          note: 'row groups of 100k rows',
        },
      );
    } else {
      out.push({
        group: g,
        name: 'hyparquet-writer',
        value: NaN,
        unit: '',
        note: hypError ?? 'not installed',
      });
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes(CHILD_FLAG)) {
  await childMain();
}
