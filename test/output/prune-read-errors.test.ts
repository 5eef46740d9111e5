/**
 * Prune deletes only what it can prove (issue 24): a published snapshot whose manifest is cut short
 * and whose pipeline record expired is kept and reported with the cause, on a local root and on an
 * s3:// root (real s3rver), through the real CLI; a storage that keeps failing stops prune before
 * anything is removed, with one line naming what could not be read, and the CLI exits 1 with that
 * line alone (an s3:// root behind a proxy that drops every read of one manifest).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, truncate, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.js';
import { listForPrune, planPrune } from '../../src/output/readers/retention.js';
import { openStorage } from '../../src/output/storage/open-storage.js';
import type { Storage } from '../../src/output/storage/storage.js';
import { newestPublishedOtherThan, readStoredText } from '../../src/output/catalog/stored-snapshots.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import { openTestStorage, s3rverEnv, startFaultProxy, startS3, type TestS3 } from '../helpers/s3.js';
import { flakyReads } from '../helpers/flaky-storage.js';
import { publishFactParts, stageFactParts } from '../helpers/synthetic-snapshot.js';

const exec = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/filings-export.mjs', import.meta.url));
const THREE_DAYS_AGO = new Date(Date.now() - 3 * 86_400_000);

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'prune-read-errors-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Publishes one snapshot of two companies under `root` (a directory or s3://). */
async function publish(
  root: string,
  open: ((r: string) => Storage) | undefined,
  id: string,
  date: string,
): Promise<void> {
  const ports = await outputPorts(open === undefined ? {} : { openStorage: open, tmpDir: tmp });
  const at = { root, id, date };
  const companies = ['AAA', 'BBB'].map((ticker) => ({ ticker, cik: '7', rows: 30 }));
  await publishFactParts(ports, at, await stageFactParts(ports, at, companies));
  await ports.closeOutput();
}

/** Every file under `dir` whose path names `id`. */
async function filesOf(dir: string, id: string): Promise<string[]> {
  const all = (await readdir(dir, { recursive: true })).map(String);
  const out: string[] = [];
  for (const rel of all)
    if (rel.includes(id) && (await stat(join(dir, rel))).isFile()) out.push(join(dir, rel));
  return out;
}

async function cli(root: string, args: string[], env: Record<string, string> = {}) {
  return exec(process.execPath, [BIN, ...args, '--out', root], {
    env: {
      ...process.env,
      ...env,
      FILINGS_EXPORT_PREFIX: `prune-read-errors-${process.pid}`,
      FILINGS_EXPORT_TMP_DIR: tmp,
      LOG_LEVEL: 'warn',
    },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
}

/** The scenario, checked after `prune --keep 5`: nothing removed, older-1 kept with its cause. */
async function expectKeptWithCause(
  res: { code: number; stdout: string; stderr: string },
  storage: Storage,
  before: string[],
): Promise<void> {
  expect(res.stderr).not.toMatch(/prune|filings-export:/);
  expect(res.code).toBe(0);
  expect(res.stdout).toMatch(
    /kept older-1: published \(its _SUCCESS exists\) but its manifest could not be used: .*manifest\.json.*: kept until that is fixed/,
  );
  expect(res.stdout).toMatch(/kept newer-1: newest published/);
  expect(res.stdout).toContain('nothing to remove');
  expect(res.stdout).not.toMatch(/removed older-1/);
  expect((await storage.list('')).map((o) => o.key)).toEqual(before);
}

describe('prune with a published snapshot whose manifest is cut short', () => {
  it('keeps it on a local root and says why', async () => {
    const root = join(tmp, 'local-root');
    await publish(root, undefined, 'older-1', '2026-11-20');
    await publish(root, undefined, 'newer-1', '2026-11-21');
    await truncate(join(root, '_snapshots', 'older-1', 'manifest.json'), 40);
    for (const f of await filesOf(root, 'older-1')) await utimes(f, THREE_DAYS_AGO, THREE_DAYS_AGO);
    const storage = openStorage(root);
    const before = (await storage.list('')).map((o) => o.key);
    await expectKeptWithCause(await cli(root, ['prune', '--keep', '5']), storage, before);
  });

  it('keeps it on an s3:// root and says why', async () => {
    const s3: TestS3 = await startS3();
    const root = `s3://${s3.bucket}/exports`;
    const open = (r: string): Storage => openTestStorage(s3.endpoint, r);
    const storage = open(root);
    try {
      await publish(root, open, 'older-1', '2026-11-20');
      await publish(root, open, 'newer-1', '2026-11-21');
      const manifestKey = '_snapshots/older-1/manifest.json';
      // Cut short, as a failed or partial write leaves it.
      await storage.putBytes(manifestKey, (await readStoredText(storage, manifestKey)).slice(0, 40));
      for (const f of await filesOf(s3.dir, 'older-1')) await utimes(f, THREE_DAYS_AGO, THREE_DAYS_AGO);
      const listed = await storage.list('');
      // The bucket reports the files as three days old, as the root did.
      const old = listed.filter((o) => o.key.includes('older-1'));
      expect(old.length).toBeGreaterThan(3);
      for (const o of old) expect(Date.now() - (o.modifiedMs ?? 0)).toBeGreaterThan(2.9 * 86_400_000);
      await expectKeptWithCause(
        await cli(root, ['prune', '--keep', '5'], s3rverEnv(s3.endpoint)),
        storage,
        listed.map((o) => o.key),
      );
    } finally {
      await storage.close();
      await s3.close();
    }
  });
});

describe('prune on a storage whose reads keep failing', () => {
  it('retries, then stops with one line naming the object and the cause, and removes nothing', async () => {
    const root = join(tmp, 'flaky-root');
    await publish(root, undefined, 'f-1', '2026-11-20');
    await publish(root, undefined, 'f-2', '2026-11-21');
    const storage = flakyReads(openStorage(root), (k) => k === '_snapshots/f-1/manifest.json');
    const waits: number[] = [];
    const err = await listForPrune(storage, { sleep: async (ms) => void waits.push(ms) }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StorageError);
    const e = err as StorageError;
    expect(e.code).toBe('STORAGE_UNAVAILABLE');
    expect(e.retryable).toBe(true);
    expect(e.message).toMatch(
      /^prune stopped, nothing removed: could not read .*_snapshots\/f-1\/manifest\.json \(3 attempts\): read ECONNRESET/,
    );
    expect(e.message).not.toContain('\n');
    expect((e.cause as StorageError).cause).toMatchObject({ code: 'ECONNRESET' });
    expect(storage.state.failures).toBe(3);
    expect(waits).toHaveLength(2);
    expect(storage.state.deleted).toEqual([]);
  });

  it('through the CLI, on an s3:// root whose manifest reads are always dropped: one line, exit 1, nothing removed', async () => {
    const s3 = await startS3();
    const manifestRead = /^(GET|HEAD) \S*\/_snapshots\/f-1\/manifest\.json/;
    const proxy = await startFaultProxy(s3.endpoint, { dropEvery: (line) => manifestRead.test(line) });
    const root = `s3://${s3.bucket}/exports`;
    const open = (r: string): Storage => openTestStorage(s3.endpoint, r);
    const storage = open(root);
    try {
      await publish(root, open, 'f-1', '2026-11-20');
      await publish(root, open, 'f-2', '2026-11-21');
      const before = (await storage.list('')).map((o) => o.key);
      // The AWS SDK warns on Node 20 in 9 lines of its own (Node >= 22 from 2027); the line is ours.
      const res = await cli(root, ['prune', '--keep', '1'], {
        ...s3rverEnv(proxy.endpoint),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      });
      expect(res.stdout).toBe('');
      expect(res.stderr.trimEnd().split('\n'), res.stderr).toEqual([
        expect.stringMatching(
          /^filings-export: prune stopped, nothing removed: could not read \S*_snapshots\/f-1\/manifest\.json \(3 attempts\): /,
        ),
      ]);
      expect(res.code).toBe(1);
      // Each of the 3 attempts reached the storage and was dropped; f-1 would otherwise be removed.
      expect(proxy.faultsInjected).toBeGreaterThanOrEqual(3);
      expect((await storage.list('')).map((o) => o.key)).toEqual(before);
    } finally {
      await storage.close();
      await proxy.close();
      await s3.close();
    }
  });

  it('a failure that passes within the attempts is no failure: the plan is the usual one', async () => {
    const root = join(tmp, 'flaky-root');
    let failures = 1;
    const storage = flakyReads(
      openStorage(root),
      (k) => k === '_snapshots/f-1/manifest.json' && failures-- > 0,
    );
    const snapshots = await listForPrune(storage, { sleep: async () => undefined });
    expect(snapshots.map((s) => [s.snapshotId, s.published, s.manifest?.snapshot_date])).toEqual([
      ['f-1', true, '2026-11-20'],
      ['f-2', true, '2026-11-21'],
    ]);
    const plan = planPrune(snapshots, { keep: 1, now: Date.now(), pipelineState: new Map() });
    expect(plan.remove.map((a) => a.snapshotId)).toEqual(['f-1']);
  });

  it('the source of an incremental night: an unreadable candidate fails the lookup instead of being skipped', async () => {
    const root = join(tmp, 'flaky-root');
    const storage = flakyReads(openStorage(root), (k) => k === '_snapshots/f-1/manifest.json');
    // f-2 excluded (the night itself), so only f-1 can be the source: skipping it would say "none".
    const err = await newestPublishedOtherThan(storage, 'f-2', {
      sleep: async () => undefined,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true });
    expect(storage.state.failures).toBe(3);
    const clean = await newestPublishedOtherThan(openStorage(root), 'f-2');
    expect(clean?.snapshot_id).toBe('f-1');
  });
});
