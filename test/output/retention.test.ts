/**
 * Retention rules without a server (planPrune is pure), then a prune of a local root end to end:
 * folders gone, the newest published snapshot and the latest pointer intact.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import { applyPrune, planPrune, type PipelineState } from '../../src/output/readers/retention.js';
import { inPublishOrder } from '../../src/output/catalog/publish-order.js';
import {
  latestStoredSnapshot,
  listStoredSnapshots,
  newestPublishedOtherThan,
  type StoredSnapshot,
} from '../../src/output/catalog/stored-snapshots.js';
import { openStorage } from '../../src/output/storage/open-storage.js';
import { readLatest } from '../../src/output/catalog/upload-snapshot.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { PartPointer } from '../../src/types.js';
import { syntheticFactRow } from '../helpers/synthetic-rows.js';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const DAY = 86_400_000;

function snap(
  id: string,
  o: { date?: string; publishedDaysAgo?: number; touchedDaysAgo?: number; staging?: boolean },
): StoredSnapshot {
  const touched = NOW - (o.touchedDaysAgo ?? 0) * DAY;
  const published = o.publishedDaysAgo !== undefined;
  const manifest = published
    ? ({
        snapshot_id: id,
        snapshot_date: o.date ?? '2026-11-01',
        published_at: new Date(NOW - o.publishedDaysAgo! * DAY).toISOString(),
      } as Manifest)
    : null;
  return {
    snapshotId: id,
    published,
    manifest,
    meta: published ? [{ key: `_snapshots/${id}/_SUCCESS`, bytes: 0, modifiedMs: touched }] : [],
    data: published
      ? [
          {
            key: `facts_full/snapshot_date=${o.date}/snapshot_id=${id}/part-00000.parquet`,
            bytes: 10,
            modifiedMs: touched,
          },
        ]
      : [],
    staging:
      o.staging === true || !published
        ? [{ key: `_staging/${id}/facts_full/A.ndjson.gz`, bytes: 5, modifiedMs: touched }]
        : [],
  };
}

const removed = (plan: ReturnType<typeof planPrune>): string[] =>
  plan.remove.map((a) => `${a.what}:${a.snapshotId}`).sort();

describe('planPrune', () => {
  const published = [
    snap('n-1', { date: '2026-11-21', publishedDaysAgo: 3 }),
    snap('n-2', { date: '2026-11-22', publishedDaysAgo: 2, staging: true }),
    snap('n-3', { date: '2026-11-23', publishedDaysAgo: 1 }),
    snap('n-4', { date: '2026-11-24', publishedDaysAgo: 0 }),
  ];

  it('keeps the newest N published, removes the rest and staging a published one left', () => {
    const plan = planPrune(published, { keep: 2, now: NOW, pipelineState: new Map() });
    expect(removed(plan)).toEqual(['snapshot:n-1', 'snapshot:n-2']);
    expect(plan.kept.find((k) => k.snapshotId === 'n-4')?.reason).toBe('newest published');
    const keepThree = planPrune(published, { keep: 3, now: NOW, pipelineState: new Map() });
    expect(removed(keepThree)).toEqual(['snapshot:n-1', 'staging:n-2']);
  });

  it('--older-than spares old-enough-to-keep snapshots beyond N; --keep below 1 is refused', () => {
    const plan = planPrune(published, {
      keep: 1,
      olderThanMs: 2.5 * DAY,
      now: NOW,
      pipelineState: new Map(),
    });
    expect(removed(plan)).toEqual(['snapshot:n-1', 'staging:n-2']);
    expect(() => planPrune(published, { keep: 0, now: NOW, pipelineState: new Map() })).toThrow(
      /--keep must be a whole number of at least 1/,
    );
  });

  it('never removes an unpublished snapshot the pipeline runs or may retry, nor any when Redis is unknown', () => {
    const unpublished = [
      snap('u-run', { touchedDaysAgo: 5 }),
      snap('u-failed-new', { touchedDaysAgo: 5 }),
      snap('u-failed-old', { touchedDaysAgo: 5 }),
      snap('u-gone-old', { touchedDaysAgo: 3 }),
      snap('u-gone-fresh', { touchedDaysAgo: 0.1 }),
    ];
    const states = new Map<string, PipelineState>([
      ['u-run', { kind: 'active' }],
      ['u-failed-new', { kind: 'retryable', updatedAtMs: NOW - DAY }],
      ['u-failed-old', { kind: 'retryable', updatedAtMs: NOW - 10 * DAY }],
    ]);
    expect(removed(planPrune(unpublished, { keep: 1, now: NOW, pipelineState: states }))).toEqual([
      'snapshot:u-gone-old',
    ]);
    expect(
      removed(planPrune(unpublished, { keep: 1, olderThanMs: 7 * DAY, now: NOW, pipelineState: states })),
    ).toEqual(['snapshot:u-failed-old']);
    const unknown = planPrune(unpublished, { keep: 1, now: NOW, pipelineState: null });
    expect(unknown.remove).toEqual([]);
    expect(unknown.kept.every((k) => /could not be asked/.test(k.reason))).toBe(true);
  });

  it('keeps what it cannot read: a published one without a usable manifest, an unpublished one with an invalid manifest', () => {
    const cut = { ...snap('p-cut', { date: '2026-11-20', publishedDaysAgo: 3, touchedDaysAgo: 3 }) };
    Object.assign(cut, { manifest: null, unreadable: 'its manifest could not be used: not valid JSON' });
    const bad = {
      ...snap('u-bad', { touchedDaysAgo: 3 }),
      unreadable: 'its manifest could not be used: not a manifest',
    };
    const plan = planPrune([...published, cut, bad], { keep: 1, now: NOW, pipelineState: new Map() });
    // Beyond the newest 1 the readable ones go as before; the unreadable two stay, with the cause.
    expect(removed(plan)).toEqual(['snapshot:n-1', 'snapshot:n-2', 'snapshot:n-3']);
    expect(plan.kept.find((k) => k.snapshotId === 'p-cut')).toEqual({
      snapshotId: 'p-cut',
      published: true,
      reason:
        'published (its _SUCCESS exists) but its manifest could not be used: not valid JSON: kept until that is fixed',
    });
    expect(plan.kept.find((k) => k.snapshotId === 'u-bad')?.reason).toMatch(
      /^not published and its manifest could not be used: not a manifest/,
    );
  });
});

describe('prune of a local root', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'retention-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('removes the old snapshot with its folders, and the newest stays readable with its latest pointer', async () => {
    const ports = await outputPorts();
    for (const [id, date] of [
      ['l-1', '2026-11-20'],
      ['l-2', '2026-11-21'],
    ] as const) {
      const w = ports.staged.createWriter({
        root: dir,
        snapshotId: id,
        dataset: 'facts_core',
        ticker: 'AAA',
        fetchedAt: `${date}T00:00:00Z`,
      });
      for (let i = 0; i < 20; i++) await w.write(syntheticFactRow(i, { ticker: 'AAA', cik: '1' }));
      const parts: PartPointer[] = [
        { dataset: 'facts_core', ticker: 'AAA', status: 'done', ...(await w.finish()) },
      ];
      await ports.publish({
        root: dir,
        snapshotId: id,
        snapshotDate: date,
        formats: ['parquet'],
        datasets: ['facts_core'],
        parts,
        waits: [],
        startedAt: `${date}T00:00:00Z`,
        requests: 1,
        retries: 0,
        rateLimited429: 0,
      });
    }
    // A leftover temp file of a crashed writer inside the old snapshot's own folder goes with it.
    const oldFolder = join(dir, 'facts_core', 'snapshot_date=2026-11-20', 'snapshot_id=l-1');
    await writeFile(join(oldFolder, 'part-00001.parquet.tmp-1-abc'), 'x');
    await mkdir(join(dir, '_staging', 'l-2'), { recursive: true });
    await writeFile(join(dir, '_staging', 'l-2', 'leftover.ndjson.gz'), 'x');

    const storage = openStorage(dir);
    const plan = planPrune(await listStoredSnapshots(storage), {
      keep: 1,
      now: Date.now(),
      pipelineState: new Map(),
    });
    expect(removed(plan)).toEqual(['snapshot:l-1', 'staging:l-2']);
    await applyPrune(storage, plan);
    expect(await readdir(join(dir, 'facts_core', 'snapshot_date=2026-11-20'))).toEqual([]);
    expect(await readdir(join(dir, '_snapshots'))).toEqual(['l-2']);
    expect((await readdir(join(dir, '_staging'))).filter((n) => n.startsWith('l-'))).toEqual([]);
    expect((await readLatest(storage))?.snapshot_id).toBe('l-2');
    const left = await listStoredSnapshots(storage);
    expect(left.map((s) => [s.snapshotId, s.published])).toEqual([['l-2', true]]);
    await ports.closeOutput();
  });
});

describe('publish order decides "newest", never the label date', () => {
  it('orders by publish instant, then id; an unknown publish time is the oldest', () => {
    const order = inPublishOrder(
      [
        { snapshot_id: 'b', published_at: '2026-11-28T01:00:00.000Z' },
        { snapshot_id: 'a', published_at: '2026-11-28T02:00:00+01:00' }, // the same instant as b
        { snapshot_id: 'old', published_at: undefined },
        { snapshot_id: 'bad', published_at: 'yesterday' },
        { snapshot_id: 'c', published_at: '2026-11-28T00:59:59.999Z' },
      ],
      (s) => s,
    ).map((s) => s.snapshot_id);
    expect(order).toEqual(['bad', 'old', 'c', 'a', 'b']);
  });

  it('prune keeps the snapshot published last even when its label date is the earliest', () => {
    // n-late ran last in a time zone behind the others: its label date is two days earlier.
    const snapshots = [
      snap('n-3', { date: '2026-11-23', publishedDaysAgo: 2 }),
      snap('n-4', { date: '2026-11-24', publishedDaysAgo: 1 }),
      snap('n-late', { date: '2026-11-22', publishedDaysAgo: 0 }),
    ];
    const plan = planPrune(snapshots, { keep: 1, now: NOW, pipelineState: new Map() });
    expect(removed(plan)).toEqual(['snapshot:n-3', 'snapshot:n-4']);
    expect(plan.kept.find((k) => k.snapshotId === 'n-late')?.reason).toBe('newest published');
  });

  it('the source of an incremental night and latest: the one published last, pointer or listing', async () => {
    const root = await mkdtemp(join(tmpdir(), 'latest-published-'));
    try {
      const put = async (id: string, date: string, publishedAt: string, success: boolean): Promise<void> => {
        await mkdir(join(root, '_snapshots', id), { recursive: true });
        const m = {
          manifest_version: 1,
          snapshot_id: id,
          snapshot_date: date,
          published_at: publishedAt,
          files: [],
        };
        await writeFile(join(root, '_snapshots', id, 'manifest.json'), JSON.stringify(m));
        if (success) await writeFile(join(root, '_snapshots', id, '_SUCCESS'), '');
      };
      const storage = openStorage(root);
      expect(await newestPublishedOtherThan(storage, 'n-5')).toBeUndefined();
      await put('n-1', '2026-11-20', '2026-11-20T02:00:00Z', true);
      await put('n-2', '2026-11-21', '2026-11-25T02:00:00Z', false); // still publishing: no _SUCCESS
      await put('n-4', '2026-11-23', '2026-11-23T02:00:00Z', true);
      // Published last, labelled earliest (a time zone far behind the others').
      await put('n-0', '2026-11-19', '2026-11-24T02:00:00.000+00:00', true);
      expect((await newestPublishedOtherThan(storage, 'n-5'))?.snapshot_id).toBe('n-0');
      expect(await latestStoredSnapshot(storage)).toBe('n-0');
      // Without a pointer, latest lists `_snapshots/` alone: a first run's staged files stay unread.
      const listed: string[] = [];
      const recording = Object.assign(Object.create(storage) as typeof storage, {
        list: (prefix: string) => {
          listed.push(prefix);
          return storage.list(prefix);
        },
      });
      expect(await latestStoredSnapshot(recording)).toBe('n-0');
      expect(listed).toEqual(['_snapshots/']);
      // A pointer written by an earlier version (moved by label date, no `order`) is not trusted.
      await writeFile(
        join(root, 'latest'),
        JSON.stringify({ snapshot_id: 'n-4', snapshot_date: '2026-11-23' }),
      );
      expect((await readLatest(storage))?.snapshot_id).toBeUndefined();
      expect((await newestPublishedOtherThan(storage, 'n-5'))?.snapshot_id).toBe('n-0');
      expect(await latestStoredSnapshot(storage)).toBe('n-0');
      // A current pointer is the answer, and the listing decides when it names the night itself.
      await writeFile(
        join(root, 'latest'),
        JSON.stringify({ snapshot_id: 'n-0', snapshot_date: '2026-11-19', order: 'published_at' }),
      );
      expect((await newestPublishedOtherThan(storage, 'n-5'))?.snapshot_id).toBe('n-0');
      expect((await newestPublishedOtherThan(storage, 'n-0'))?.snapshot_id).toBe('n-4');
      expect((await listStoredSnapshots(storage)).map((s) => s.snapshotId)).toEqual([
        'n-1',
        'n-4',
        'n-0',
        'n-2',
      ]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
