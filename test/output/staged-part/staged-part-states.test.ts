/**
 * STAGED_PART_MOVES is the truth about a staged part's life (src/output/staged-part/states.ts): a
 * real writer, a real piece conversion (DuckDB) and the module's discard walk a part through its
 * states, its state is read back from its files after each step, and every step seen is a move of
 * the table. Each mover the table names exists on the module's faces.
 */
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as stagedPart from '../../../src/output/staged-part/index.js';
import * as parquet from '../../../src/output/staged-part/parquet/index.js';
import {
  checkStagedPartMove,
  createPartWriter,
  discardStagedPart,
  isStagedPartMove,
  readyPieces,
  rowsPerPiece,
  STAGED_PART_MOVES,
  stagedPartStateOf,
  stagingOptionsOf,
  type PartWriter,
  type StagedPartState,
} from '../../../src/output/staged-part/index.js';
import { syntheticFactRow } from '../../helpers/synthetic-rows.js';

const SNAP = 'moves';
const GROUP = 2048;
/** Root of the writers that are only looked at, never finished. */
const scratch = mkdtempSync(join(tmpdir(), 'fx-moves-'));
const roots: string[] = [scratch];
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

function newWriter(root: string, ticker: string, pieceRows?: number): PartWriter {
  return createPartWriter({
    root,
    snapshotId: SNAP,
    dataset: 'facts_full',
    ticker,
    lineage: { snapshotId: SNAP, fetchedAt: '2026-11-25T02:03:04.567Z', requestedTicker: ticker },
    chunkBytes: 16 * 1024,
    memberBytes: 64 * 1024,
    ...(pieceRows === undefined ? {} : { pieceRows }),
  });
}

/** Records each state the part is seen in; a repeated state is not a move. */
class Walk {
  readonly seen: (StagedPartState | 'gone')[] = [];
  constructor(private readonly finalFile: string) {}
  async look(): Promise<StagedPartState | 'gone'> {
    const s = await stagedPartStateOf(this.finalFile);
    if (this.seen.at(-1) !== s) this.seen.push(s);
    return s;
  }
  /** The moves seen, 'gone' read as the state its mover made (discarded here: nothing publishes). */
  moves(): [StagedPartState, StagedPartState][] {
    const states = this.seen.map((s) => (s === 'gone' ? 'discarded' : s));
    return states.slice(1).map((to, i) => [states[i]!, to]);
  }
}

async function writeRows(w: PartWriter, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i++)
    await w.write(syntheticFactRow(i, { ticker: 'BIG', cik: '0000000001' }));
}

/** Waits (bounded) until the writer has whole pieces of `size` rows on disk. */
async function piecesOnDisk(w: PartWriter, size: number): Promise<ReturnType<typeof readyPieces>['pieces']> {
  for (let i = 0; i < 400; i++) {
    const ready = readyPieces(w, 0, size);
    if (ready.pieces.length > 0) return ready.pieces;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('no piece reached the disk');
}

describe('a staged part moves only as STAGED_PART_MOVES says', () => {
  it('staging → converted in pieces → staged → discarded, read from its files', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fx-moves-'));
    roots.push(root);
    const size = rowsPerPiece(GROUP);
    const w = newWriter(root, 'BIG', size);
    const finalFile = join(root, stagedPart.stagedPartRelPath(SNAP, 'facts_full', 'BIG'));
    const walk = new Walk(finalFile);
    // The writer opens its temporary file at once.
    expect(await walk.look()).toBe('staging');
    await writeRows(w, 0, size * 2 + 100);
    expect(await walk.look()).toBe('staging');
    const [piece] = await piecesOnDisk(w, size);
    const done = await parquet.convertPiece(
      { root, snapshotId: SNAP, dataset: 'facts_full', ...piece! },
      { rowGroupRows: GROUP },
    );
    expect(done.status).toBe('converted');
    expect(await walk.look()).toBe('converted-in-pieces');
    await w.finish();
    expect(await walk.look()).toBe('staged');
    await discardStagedPart(finalFile);
    expect(await walk.look()).toBe('gone');
    expect(walk.seen).toEqual(['staging', 'converted-in-pieces', 'staged', 'gone']);
    for (const [from, to] of walk.moves()) expect(isStagedPartMove(from, to), `${from} → ${to}`).toBe(true);
  });

  it('staging → discarded by abort', async () => {
    const root = await mkdtemp(join(tmpdir(), 'fx-moves-'));
    roots.push(root);
    const w = newWriter(root, 'ABT');
    const walk = new Walk(join(root, stagedPart.stagedPartRelPath(SNAP, 'facts_full', 'ABT')));
    await writeRows(w, 0, 500);
    expect(await walk.look()).toBe('staging');
    await w.abort();
    expect(await walk.look()).toBe('gone');
    for (const [from, to] of walk.moves()) expect(isStagedPartMove(from, to), `${from} → ${to}`).toBe(true);
  });

  it('refuses a move the table does not have, naming the part and both states', () => {
    expect(() => checkStagedPartMove('staged', 'staging', 'facts_full/BIG')).toThrow(
      /facts_full\/BIG: no move from staged to staging/,
    );
    expect(() => checkStagedPartMove('published', 'discarded', 'x')).toThrow(/no move from published/);
    expect(() => checkStagedPartMove('staging', 'staged', 'x')).not.toThrow();
  });

  it('every mover the table names is on the module (a renamed mover fails here)', () => {
    const writer = newWriter(scratch, 'NAMES');
    const faces: Record<string, unknown> = { ...stagedPart, ...parquet };
    const movers = Object.values(STAGED_PART_MOVES).flatMap((ms) => ms.map((m) => m.by));
    expect(movers.length).toBeGreaterThan(0);
    for (const by of new Set(movers)) {
      const [owner, method] = by.split('.');
      if (owner === 'PartWriter')
        expect(typeof (writer as unknown as Record<string, unknown>)[method!], by).toBe('function');
      else expect(typeof faces[by], by).toBe('function');
    }
    return writer.abort();
  });
});

describe('the staged part decides its pieces from what the pipeline knows', () => {
  it('pieces only when converting while staging, never for a dataset whose columns are inferred', () => {
    expect(stagingOptionsOf('facts_full', undefined)).toEqual({});
    expect(stagingOptionsOf('facts_full', { parquetOnly: true })).toEqual({});
    expect(stagingOptionsOf('facts_full', { convertWhileStaging: 4096 })).toEqual({ pieceRows: 4096 });
    expect(stagingOptionsOf('series_catalog', { convertWhileStaging: 4096, parquetOnly: true })).toEqual({});
  });

  it("a part published as Parquet alone keeps its pieces' rows out of the gzip", () => {
    expect(stagingOptionsOf('evidence', { convertWhileStaging: 4096, parquetOnly: true })).toEqual({
      pieceRows: 4096,
      piecesOutsideGzip: true,
    });
    expect(newWriterWith(stagingOptionsOf('facts_full', { convertWhileStaging: 4096 })).pieceRows).toBe(4096);
    expect(
      newWriterWith(stagingOptionsOf('series_catalog', { convertWhileStaging: 4096 })).pieceRows,
    ).toBeUndefined();
  });
});

const opened: PartWriter[] = [];
afterAll(async () => {
  await Promise.all(opened.map((w) => w.abort()));
});

function newWriterWith(o: { pieceRows?: number }): PartWriter {
  const w = newWriter(scratch, `PLAN${opened.length}`, o.pieceRows);
  opened.push(w);
  return w;
}
