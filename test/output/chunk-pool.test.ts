/**
 * The part writer's chunks used again (src/output/staged-part/writer/chunk-pool.ts): a buffer returns to the
 * pool only once its owner and every write it was lent to are done with it, and a part staged
 * through the pool (its rows to the segments' plain files and to the gzip, real files, real zlib)
 * holds the same lines as one staged in a single chunk, from a bounded number of buffers.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ChunkPool } from '../../src/output/staged-part/writer/chunk-pool.js';
import { createPartWriter } from '../../src/output/staged-part/index.js';
import { piecesDir } from '../../src/output/staged-part/layout.js';
import { maxFreeChunks } from '../../src/output/staged-part/writer/part-writer.js';
import { rowsPerPiece } from '../../src/output/staged-part/row-cuts.js';
import { syntheticFactRow } from '../helpers/synthetic-rows.js';

describe('ChunkPool', () => {
  it('hands a buffer out again only after its owner ended the lease and every write called back', () => {
    const pool = new ChunkPool(64, 4);
    const a = pool.take();
    const lease = pool.lease(a);
    const first = lease.hold();
    const second = lease.hold();
    lease.end();
    first();
    expect(pool.freeCount).toBe(0);
    expect(pool.take()).not.toBe(a);
    second();
    expect(pool.freeCount).toBe(1);
    expect(pool.take()).toBe(a);
  });

  it('waits for its owner: writes called back before the lease ends do not return the buffer', () => {
    const pool = new ChunkPool(64, 4);
    const a = pool.take();
    const lease = pool.lease(a);
    lease.hold()();
    expect(pool.freeCount).toBe(0);
    lease.end();
    expect(pool.take()).toBe(a);
  });

  it('counts a callback called twice, or an end called twice, once', () => {
    const pool = new ChunkPool(64, 4);
    const a = pool.take();
    const lease = pool.lease(a);
    const cb = lease.hold();
    lease.hold();
    cb();
    cb();
    lease.end();
    lease.end();
    // One hold is still out: the buffer is in use.
    expect(pool.freeCount).toBe(0);
  });

  it('keeps at most maxFree buffers, and none of another size', () => {
    const pool = new ChunkPool(64, 2);
    const bufs = [pool.take(), pool.take(), pool.take()];
    for (const b of bufs) pool.lease(b).end();
    expect(pool.freeCount).toBe(2);
    pool.lease(Buffer.allocUnsafe(128)).end();
    expect(pool.freeCount).toBe(2);
    const small = new ChunkPool(64, 4);
    small.lease(Buffer.allocUnsafe(128)).end();
    expect(small.freeCount).toBe(0);
  });
});

describe('a part staged through the pool', () => {
  const roots: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
  });

  const ROWS = 30_000;
  // The default size: the pool's bound (MAX_FREE_CHUNKS) is what can be in flight at it.
  const CHUNK = 256 * 1024;
  const rows = Array.from({ length: ROWS }, (_, i) =>
    syntheticFactRow(i, { ticker: 'BIG', cik: '0000000001' }),
  );

  /** Stages the rows; returns every staged line in row order (plain files first, then the gzip). */
  async function stage(chunkBytes: number, outside: boolean): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'fx-chunks-'));
    roots.push(root);
    const w = createPartWriter({
      root,
      snapshotId: 'snap',
      dataset: 'facts_full',
      ticker: 'BIG',
      lineage: { snapshotId: 'snap', fetchedAt: '2026-11-27T01:02:03.000Z', requestedTicker: 'BIG' },
      chunkBytes,
      pieceRows: rowsPerPiece(2048),
      ...(outside ? { piecesOutsideGzip: true } : {}),
    });
    for (const r of rows) await w.write(r);
    const part = await w.finish();
    const staged = join(root, part.file);
    const dir = piecesDir(staged);
    const files = (await readdir(dir).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.ndjson'))
      .sort((x, y) => Number(x.split('-')[1]) - Number(y.split('-')[1]));
    const plain = await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8')));
    return plain.join('') + gunzipSync(await readFile(staged)).toString('utf8');
  }

  it('writes the same lines to the plain files and the gzip as one chunk does, from a few buffers', async () => {
    const whole = await stage(64 * 1024 * 1024, false);
    expect(whole.split('\n').length - 1).toBe(ROWS);
    const alloc = vi.spyOn(Buffer, 'allocUnsafe');
    for (const outside of [false, true]) {
      alloc.mockClear();
      const text = await stage(CHUNK, outside);
      expect(text).toBe(whole);
      const chunks = alloc.mock.calls.filter(([size]) => size === CHUNK).length;
      // Hundreds of chunks were filled (the text is MBs), from no more buffers than can be in flight.
      expect(whole.length / CHUNK).toBeGreaterThan(120);
      expect(chunks).toBeGreaterThan(0);
      expect(chunks).toBeLessThanOrEqual(maxFreeChunks(CHUNK) + 6);
    }
  });
});
