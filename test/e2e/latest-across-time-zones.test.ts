/**
 * Every command agrees on `latest` (issue 36): two `run --local` processes, one after the other,
 * into one root with configs whose schedule.tz are Pacific/Kiritimati (UTC+14) and Pacific/Pago_Pago
 * (UTC-11), so the one published last has the EARLIER label date at any hour. The `latest` object,
 * `load` (DuckDB and PostgreSQL), `prune --dry-run`, `verify`, `ddl`, `status` and the next
 * incremental run all name the one published last. Real CLI processes, Redis and the emulator.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { runToExit, type CliResult } from '../helpers/processes.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');
const RUN = ['run', '--local', '--tickers', 'MSFT,NVDA', '--datasets', 'series_catalog,facts_core'];

const cli = (args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> => runToExit(BIN, args, env);

async function ok(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const r = await cli(args, env);
  expect(r.code, `${args.join(' ')}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

describe('every command agrees on latest: the snapshot published last, whatever its label date', () => {
  let h: PipelineHarness;
  let dir: string;
  let pgAdmin: pg.Client;
  let pgUrl: string;
  const db = `latest_tz_${process.pid}`;
  const east = (): string => join(dir, 'kiritimati.yaml');
  const west = (): string => join(dir, 'pago-pago.yaml');
  const manifest = async (id: string): Promise<Record<string, unknown>> =>
    JSON.parse(await readFile(join(h.outDir, '_snapshots', id, 'manifest.json'), 'utf8')) as Record<
      string,
      unknown
    >;

  beforeAll(async () => {
    h = await startPipelineHarness({ config: { 'output.formats': ['parquet'] } });
    dir = await mkdtemp(join(h.outDir, '..', 'fx-latest-tz-'));
    await writeFile(east(), 'schedule:\n  tz: Pacific/Kiritimati\n');
    await writeFile(west(), 'schedule:\n  tz: Pacific/Pago_Pago\n');
    pgAdmin = new pg.Client({ connectionString: inject('postgres').url });
    await pgAdmin.connect();
    await pgAdmin.query(`DROP DATABASE IF EXISTS ${db}`);
    await pgAdmin.query(`CREATE DATABASE ${db}`);
    pgUrl = inject('postgres').url.replace(/\/postgres$/, `/${db}`);
  }, 120_000);
  afterAll(async () => {
    await pgAdmin?.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => undefined);
    await pgAdmin?.end();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    await h?.close();
  });

  it('latest, load, prune, verify, ddl, status and the next incremental run name the later-published one', async () => {
    const duck = `duckdb:${join(dir, 'w.duckdb')}`;
    await ok([...RUN, '--config', east(), '--snapshot-id', 'tz-east'], h.env);
    expect((await ok(['load', '--into', duck], h.env)).stdout).toContain('loaded tz-east');

    // Run second, in a zone 25 hours behind: its label date is one or two days earlier.
    const second = await ok([...RUN, '--config', west(), '--snapshot-id', 'tz-west'], h.env);
    const [eastM, westM] = [await manifest('tz-east'), await manifest('tz-west')];
    expect(String(westM.snapshot_date) < String(eastM.snapshot_date)).toBe(true);
    // Its base is the snapshot published before it, although that one is dated later.
    expect(second.stderr).toContain('incremental: incremental from tz-east');
    expect((westM.incremental as Record<string, unknown>).reused_from).toBe('tz-east');

    const pointer = JSON.parse(await readFile(join(h.outDir, 'latest'), 'utf8')) as Record<string, unknown>;
    expect(pointer).toMatchObject({ snapshot_id: 'tz-west', published_at: westM.published_at });

    // The warehouse loaded tz-east; tz-west, published after it, is not "up to date".
    const load = await ok(['load', '--into', duck], h.env);
    expect(load.stdout).toContain('loaded tz-west');
    expect(load.stdout).not.toContain('up to date');
    expect((await ok(['load', '--into', duck], h.env)).stdout).toContain('up to date, nothing to load');
    // A fresh PostgreSQL loads both in publish order: tz-west last, so its tables hold tz-west.
    const pgLoad = await ok(['load', '--into', pgUrl], h.env);
    expect(pgLoad.stdout.indexOf('loaded tz-east')).toBeGreaterThanOrEqual(0);
    expect(pgLoad.stdout.indexOf('loaded tz-west')).toBeGreaterThan(pgLoad.stdout.indexOf('loaded tz-east'));
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    try {
      const held = await c.query<{ snapshot_id: string }>(
        'SELECT snapshot_id FROM filings_export_loads ORDER BY seq DESC LIMIT 1',
      );
      expect(held.rows[0]?.snapshot_id).toBe('tz-west');
    } finally {
      await c.end();
    }

    const prune = await ok(['prune', '--keep', '1', '--dry-run'], h.env);
    expect(prune.stdout).toContain('kept tz-west: newest published');
    expect(prune.stdout).toMatch(/would remove tz-east: /);
    expect((await ok(['verify', '--no-values'], h.env)).stdout).toContain('tz-west');
    const ddl = (await ok(['ddl', '--dialect', 'duckdb'], h.env)).stdout;
    expect(ddl).toContain('snapshot_id=tz-west');
    expect(ddl).not.toContain('snapshot_id=tz-east');

    const status = (await ok(['status'], h.env)).stdout;
    expect(status).toContain('snapshot tz-west: PUBLISHED');
    expect(status).toContain('latest: this snapshot (the one published last under its output root)');
    expect(status).toMatch(/tz-west +published .*latest\n/);
    expect((await ok(['status', 'tz-east'], h.env)).stdout).toContain(
      "latest: tz-west (the one published last under this snapshot's output root)",
    );
    const json = JSON.parse((await ok(['status', 'tz-east', '--json'], h.env)).stdout) as {
      latest: string | null;
    };
    expect(json.latest).toBe('tz-west');

    // The next run, in the zone ahead again, carries over from tz-west.
    const next = await ok([...RUN, '--config', east(), '--snapshot-id', 'tz-next'], h.env);
    expect(next.stderr).toContain('incremental: incremental from tz-west');
    expect(((await manifest('tz-next')).incremental as Record<string, unknown>).reused_from).toBe('tz-west');
  }, 600_000);
});
