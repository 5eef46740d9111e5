/**
 * The demo is for people (issue 36): with its output piped, as CI and `| tee` run it, every line it
 * writes is a sentence, never pino's JSON, and its counts agree ("1 company"). The real CLI, with
 * its private redis-server and in-process emulator, exports one company on two nights of the
 * emulator's clock and shows what Apple's FY2025 10-K restated (issue 40), as SEC's data has it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck } from '../../src/output/convert/duckdb.js';
import { runCli, type CliResult } from '../helpers/processes.js';

const APPLE_FACTS = join(
  import.meta.dirname,
  '..',
  '..',
  'data',
  'sec',
  'companyfacts',
  'CIK0000320193.json.gz',
);

let dir: string;
let r: CliResult;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'demo-output-'));
  // LOG_LEVEL info: the progress lines a person follows are written through the logger.
  r = await runCli(['demo', '--tickers', 'AAPL', '--out', join(dir, 'out')], {
    env: { LOG_LEVEL: 'info' },
    unset: ['REDIS_URL', 'FILINGS_API_URL', 'FILINGS_API_KEY', 'FILINGS_API_KEY_FILE', 'CI'],
    timeoutMs: 300_000,
  });
}, 330_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Observation {
  start?: string;
  end: string;
  val: number;
  accn: string;
  filed: string;
}

/**
 * Straight from SEC's companyfacts, not through the emulator: each fact (concept, unit, period) whose
 * value a filing of (after, until] changed from the one filed first or last changed, as
 * `metric period old new old-accession new-accession`.
 */
async function restatedInSecData(after: string, until: string): Promise<string[]> {
  const cf = JSON.parse(gunzipSync(await readFile(APPLE_FACTS)).toString('utf8')) as {
    facts: Record<string, Record<string, { units: Record<string, Observation[]> }>>;
  };
  const out: string[] = [];
  for (const [taxonomy, concepts] of Object.entries(cf.facts))
    for (const [concept, { units }] of Object.entries(concepts))
      for (const observations of Object.values(units)) {
        const periods = new Map<string, Observation[]>();
        for (const o of observations) {
          const key = `${o.start ?? ''}..${o.end}`;
          periods.set(key, [...(periods.get(key) ?? []), o]);
        }
        for (const reports of periods.values()) {
          reports.sort((a, b) => a.filed.localeCompare(b.filed) || a.accn.localeCompare(b.accn));
          let held = reports[0]!;
          for (const o of reports) {
            if (o.val === held.val) continue;
            const period = o.start === undefined ? `instant:${o.end}` : `duration:${o.start}..${o.end}`;
            if (o.filed > after && o.filed <= until)
              out.push([`${taxonomy}#${concept}`, period, held.val, o.val, held.accn, o.accn].join(' '));
            held = o;
          }
        }
      }
  return out.sort();
}

/** The rows of the table printed under `heading` (to the first blank line), cells split on 2+ spaces. */
function tableUnder(text: string, heading: RegExp): string[][] {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => heading.test(l));
  expect(at, `no line matching ${heading}`).toBeGreaterThanOrEqual(0);
  const end = lines.findIndex((l, i) => i > at && l.trim() === '');
  return lines.slice(at + 2, end).map((l) => l.trim().split(/ {2,}/));
}

/** The lines that parse as a JSON value: none may be written for a person. */
function jsonLines(text: string): string[] {
  return text.split('\n').filter((line) => {
    try {
      JSON.parse(line);
      return line.trim() !== '';
    } catch {
      return false;
    }
  });
}

describe('`demo` with its output piped', () => {
  it('publishes, and writes no JSON line on stdout or stderr', () => {
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout)).toEqual([]);
    expect(jsonLines(r.stderr)).toEqual([]);
  });

  it('writes its progress as readable log lines', () => {
    expect(r.stderr).toMatch(/INFO: snapshot demo-\S+: 3\/3 parts \(facts_full 1\/1/);
  });

  it("exports two nights on the emulator's clock and loads both, each in turn, with their history", () => {
    expect(r.stderr).toMatch(
      /demo: exporting 1 company x .* as snapshot demo-\S+-2025-10-30, the night of 2025-10-30 \(the emulator as of 2025-10-30\)\n/,
    );
    expect(r.stderr).toMatch(
      /as snapshot demo-\S+-2025-11-05, the night of 2025-11-05 \(the emulator as of 2025-10-30, AAPL as of 2025-11-05\)\n/,
    );
    const published = [...r.stdout.matchAll(/^snapshot (demo-\S+) published in/gm)].map((m) => m[1]);
    const loaded = [...r.stdout.matchAll(/^loaded (demo-\S+) \((\S+)\) into duckdb:\S+warehouse\.duckdb$/gm)];
    expect(loaded.map((m) => m[1])).toEqual(published);
    expect(loaded.map((m) => m[2])).toEqual(['2025-10-30', '2025-11-05']);
    expect(r.stdout).toMatch(
      /^\s+facts_full\s+full\s+\d+ rows; first load; history: \d+ versions opened, 0 closed$/m,
    );
    expect(r.stdout).toMatch(
      /^\s+facts_full\s+\S+\s+\d+ rows; .*history: \d+ versions opened, [1-9]\d* closed$/m,
    );
  });

  it("prints the facts Apple's FY2025 10-K restated between the nights, as SEC's own data has them, and the query that finds them", async () => {
    const heading =
      /^DuckDB, view facts_full_restatements in \S+warehouse\.duckdb: AAPL's facts restated between the nights of 2025-10-30 and 2025-11-05 \((\d+) facts?\)$/m;
    const rows = tableUnder(r.stdout, heading);
    const want = await restatedInSecData('2025-10-30', '2025-11-05');
    expect(want.length).toBeGreaterThan(0);
    expect(Number(heading.exec(r.stdout)?.[1])).toBe(want.length);
    // metric, period, old value, new value, old accession, new accession, the night seen.
    expect(rows.every((row) => row.length === 7 && row[6] === '2025-11-05')).toBe(true);
    const shown = rows.map((row) =>
      [row[0], row[1], row[2]!.replaceAll(',', ''), row[3]!.replaceAll(',', ''), row[4], row[5]].join(' '),
    );
    expect(shown.sort()).toEqual(want);

    // The query printed after the table reads the same rows from the warehouse the demo loaded.
    const after = r.stdout.slice(r.stdout.search(heading));
    const sql = /the query \(duckdb \S+\):\n(SELECT[\s\S]*?)\n\n/.exec(after)?.[1];
    expect(sql).toContain('FROM facts_full_restatements');
    const duck = await openDuck({ threads: 1 });
    try {
      await duck.run(`ATTACH '${join(dir, 'out', 'warehouse.duckdb')}' AS wh (READ_ONLY)`);
      await duck.run('USE wh');
      expect(await duck.all(sql!)).toHaveLength(rows.length);
    } finally {
      duck.close();
    }
  });

  it('counts one company in the singular', () => {
    expect(r.stderr).toContain('demo: exporting 1 company x ');
    expect(r.stderr).toContain('plan: 3 requests (1 company x 3 datasets');
    expect(r.stdout).toMatch(/facts_full +[\d,]+ rows from 1 company\n/);
    expect(r.stdout).not.toMatch(/\b1 companies\b/);
  });

  it('prints the DuckDB statement that reads the Iceberg table, which the publisher committed each night', async () => {
    const table = join(dir, 'out', 'facts_full');
    expect(r.stdout).toContain(`INSTALL iceberg; LOAD iceberg; SELECT * FROM iceberg_scan('${table}');\n`);
    expect((await readFile(join(table, 'metadata', 'version-hint.text'), 'utf8')).trim()).toBe('2');
  });
});
