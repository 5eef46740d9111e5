/**
 * `run --full-refresh` after a same-day run of the same request fetches everything again into a
 * new snapshot (`<id>-2`), where it used to print "already exists (published); nothing enqueued";
 * a plain repeat keeps the published answer and says how to get fresh data; a named snapshot
 * cannot be refreshed under its own name (real CLI, real Redis, the emulator over HTTP).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { CLI_BIN, runToExit, type CliResult } from '../helpers/processes.js';

/** The CLI with exactly `env` (these tests build the whole environment). */
const runCli = (args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> => runToExit(CLI_BIN, args, env);

function lastJsonLine(stdout: string): { snapshot_id: string; status: string } {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? 'null') as { snapshot_id: string; status: string };
}

describe('run --full-refresh', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('fetches a published request again into a new snapshot; a plain repeat says how to', async () => {
    const args = ['run', '--tickers', 'NVDA,AAPL', '--datasets', 'series_catalog', '--local'];
    const first = await runCli(args, h.env);
    expect(first.code, first.stderr).toBe(0);
    const published = lastJsonLine(first.stdout);
    expect(published).toMatchObject({ status: 'published' });
    expect(published.snapshot_id).toMatch(/^adhoc-\d{4}-\d{2}-\d{2}-[0-9a-f]{10}$/);
    const afterFirst = (await h.stats()).total.requests;

    const repeat = await runCli(args, h.env);
    expect(repeat.code, repeat.stderr).toBe(0);
    expect(repeat.stderr).toContain(
      `snapshot ${published.snapshot_id} already exists (published); nothing enqueued (its data is kept; run again with --full-refresh to fetch fresh data)`,
    );
    expect((await h.stats()).total.requests).toBe(afterFirst);

    for (const n of [2, 3]) {
      const before = (await h.stats()).total.requests;
      const refresh = await runCli([...args, '--full-refresh'], h.env);
      expect(refresh.code, refresh.stderr).toBe(0);
      expect(refresh.stderr).toContain('incremental: full refresh (--full-refresh)');
      expect(lastJsonLine(refresh.stdout)).toMatchObject({
        snapshot_id: `${published.snapshot_id}-${n}`,
        status: 'published',
      });
      // Both parts were fetched again: one request per company.
      expect((await h.stats()).total.requests - before).toBe(2);
    }
  });

  it('a named snapshot already published is not refreshed under its name: one line, exit 1', async () => {
    const args = ['run', '--tickers', 'MSFT', '--datasets', 'series_catalog', '--snapshot-id', 'named'];
    const first = await runCli([...args, '--local'], h.env);
    expect(first.code, first.stderr).toBe(0);
    const before = (await h.stats()).total.requests;
    const refresh = await runCli([...args, '--local', '--full-refresh'], h.env);
    expect(refresh.code).toBe(1);
    expect(refresh.stderr.trim().split('\n')).toEqual([
      'filings-export: --full-refresh: snapshot named already exists (published); a full refresh is a new snapshot: give it another --snapshot-id [INPUT_INVALID]',
    ]);
    expect((await h.stats()).total.requests).toBe(before);
  });
});
