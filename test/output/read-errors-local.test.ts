/**
 * "Absent" is not "could not read" (issue 24), on a local root with a real read error: a symlink
 * loop makes stat fail with ELOOP. The staged-part check and verify retry it, then fail with the
 * cause; a file that is really gone is still reported missing, at once.
 */
import { mkdtemp, rm, symlink, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutputError, StorageError } from '../../src/errors.js';
import { checkStagedPart } from '../../src/output/staged-part/check-staged.js';
import { verifySnapshot } from '../../src/output/readers/verify.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { PartPointer } from '../../src/types.js';
import { stageFactParts } from '../helpers/synthetic-snapshot.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'read-errors-local-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function stage(id: string): Promise<PartPointer[]> {
  const companies = ['AAA', 'BBB'].map((ticker) => ({ ticker, cik: '3', rows: 20 }));
  return stageFactParts(await outputPorts(), { root, id, date: '2026-11-20' }, companies);
}

/** Replaces a file by a symlink to itself: every stat of it fails with ELOOP. */
async function loop(path: string): Promise<void> {
  await unlink(path);
  await symlink(path, path);
}

describe('the staged-part check', () => {
  it('retries a stat that fails, then fails with the cause; never calls it missing', async () => {
    const [part] = await stage('s-1');
    await loop(join(root, part!.file!));
    const waits: number[] = [];
    const err = await checkStagedPart(root, part!, {
      readRetry: { sleep: async (ms) => void waits.push(ms) },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true });
    expect((err as Error).message).toMatch(
      /^part facts_core\/AAA: staged file .* could not read .*\(3 attempts\): .*ELOOP/,
    );
    expect((err as Error).message).not.toMatch(/missing/);
    expect(((err as Error).cause as Error).cause).toMatchObject({ code: 'ELOOP' });
    expect(waits).toHaveLength(2);
  });

  it('a staged file that is gone is missing, without retries', async () => {
    const [, part] = await stage('s-2');
    await unlink(join(root, part!.file!));
    const waits: number[] = [];
    const err = await checkStagedPart(root, part!, {
      readRetry: { sleep: async (ms) => void waits.push(ms) },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutputError);
    expect((err as Error).message).toMatch(/staged file .* is missing/);
    expect(waits).toEqual([]);
  });
});

describe('the staged-size probe a retried part uses to keep what it has', () => {
  it('answers null for a file that is gone, and fails with the cause for one it cannot read', async () => {
    const [a, b] = await stage('p-1');
    const ports = await outputPorts();
    expect(await ports.staged.bytes(root, a!.file!)).toBe(a!.bytes);
    await unlink(join(root, a!.file!));
    expect(await ports.staged.bytes(root, a!.file!)).toBeNull();
    await loop(join(root, b!.file!));
    const err = await ports.staged.bytes(root, b!.file!).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true });
    expect((err as Error).message).toMatch(/ELOOP/);
  });
});

describe('verify', () => {
  it('reports a file it cannot read with the cause, and a deleted one as missing', async () => {
    const parts = await stage('v-1');
    const ports = await outputPorts();
    const manifest = await ports.publish({
      root,
      snapshotId: 'v-1',
      snapshotDate: '2026-11-20',
      formats: ['parquet', 'ndjson'],
      datasets: ['facts_core'],
      parts,
      waits: [],
      startedAt: '2026-11-20T01:00:00Z',
      requests: 2,
      retries: 0,
      rateLimited429: 0,
    });
    expect(manifest.manifestPath).toContain('v-1');
    const report0 = await verifySnapshot(root, 'v-1');
    const [parquet, ndjson] = [
      report0.files.find((f) => f.format === 'parquet')!,
      report0.files.find((f) => f.format === 'ndjson')!,
    ];
    expect(report0.ok).toBe(true);
    await loop(join(root, parquet.path));
    await unlink(join(root, ndjson.path));
    const report = await verifySnapshot(root, 'v-1', { readRetry: { sleep: async () => undefined } });
    expect(report.ok).toBe(false);
    const byPath = new Map(report.files.map((f) => [f.path, f.problems]));
    expect(byPath.get(ndjson.path)).toEqual(['missing']);
    expect(byPath.get(parquet.path)).toEqual([
      expect.stringMatching(/^could not be read: could not read .*\(3 attempts\): .*ELOOP/),
    ]);
    await ports.closeOutput();
  });
});
