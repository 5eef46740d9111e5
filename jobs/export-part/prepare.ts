/**
 * The first step of a part: decide whether it needs a request at all. A stopped or cancelled snapshot, a part
 * already exported, or (on an incremental night) an unchanged company's part carried over all
 * end the attempt here; otherwise the outage gate says whether the request may go now.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DelayedError, UnrecoverableError } from 'bullmq';
import { coerceError } from '../../src/errors.js';
import { datasetDefinition } from '../../src/datasets/index.js';
import {
  CHANGE_DATASET,
  decideReuse,
  type ExportPartPayload,
  type ReusePorts,
} from '../../src/pipeline/index.js';
import { toPosix } from '../../src/output/catalog/index.js';
import { stagedPartRelPath } from '../../src/output/staged-part/index.js';
import { isAbsent, retryRead } from '../../src/output/storage/index.js';
import { assertNever, type PartPointer } from '../../src/types.js';
import { holdForOutage, recordEnded, type PartAttempt } from './attempt.js';
import type { ExportPartDeps } from './deps.js';

/** What the first step decided: the part is settled, or it is fetched (with a note for its pointer). */
export type Prepared =
  | { kind: 'settled'; pointer: PartPointer }
  | { kind: 'fetch'; spec: ReturnType<typeof datasetDefinition>; note?: string };

/**
 * How long a part waits for its company's catalog part before it looks again: short, since a changed
 * company's fetch starts only after it (a look is a few Redis reads; the source manifest is cached).
 */
const CATALOG_WAIT_MS = 250;

/** Settles a part that needs no request (stopped, already exported, carried over), or says fetch it. */
export async function prepareOrReuse(a: PartAttempt): Promise<Prepared> {
  const { deps, p, log } = a;
  const state = await deps.store.state(p.snapshotId);
  if (state === undefined)
    throw new UnrecoverableError(`snapshot ${p.snapshotId} has no record in Redis (expired or removed)`);
  // Cancelled: the part was queued before its jobs were removed (or was in flight then); no request.
  if (state === 'cancelled')
    return {
      kind: 'settled',
      pointer: {
        ...a.base,
        status: 'failed',
        rows: 0,
        bytes: 0,
        message: 'not fetched: the snapshot was cancelled',
      },
    };
  if (state === 'stopped') {
    const pointer: PartPointer = {
      ...a.base,
      status: 'failed',
      rows: 0,
      bytes: 0,
      message: 'not fetched: the snapshot was stopped',
    };
    await deps.store.recordPart(p.snapshotId, pointer);
    return { kind: 'settled', pointer };
  }

  // A retried snapshot keeps what it already has: a finished part is not fetched again.
  const previous = await deps.store.getPart(p.snapshotId, p.dataset, a.key);
  if (previous && (await stillValid(previous, p.outDir, deps.staged.bytes))) {
    log.debug('part already exported; reusing it');
    return { kind: 'settled', pointer: previous };
  }

  const spec = datasetDefinition(p.dataset);
  // Incremental night: an unchanged company's part is carried over instead of fetched.
  if (p.reuse === undefined || deps.reuse === undefined || p.dataset === CHANGE_DATASET)
    return { kind: 'fetch', spec };
  const outcome = await carryOver(deps.reuse, p, a.key, deps.store);
  if (outcome.kind === 'wait') {
    // The company's catalog part has not ended: back in a moment, without spending an attempt.
    await a.job.moveToDelayed(Date.now() + CATALOG_WAIT_MS, a.token);
    throw new DelayedError(`${a.label}: waiting for the ${CHANGE_DATASET} part of ${a.key}`);
  }
  if (outcome.kind === 'reused') {
    await deps.store.recordPart(p.snapshotId, outcome.pointer);
    deps.metrics?.parts.inc({ dataset: p.dataset, outcome: 'reused' });
    log.debug({ from: p.reuse.from, rows: outcome.pointer.rows }, 'part carried over');
    return { kind: 'settled', pointer: outcome.pointer };
  }
  return { kind: 'fetch', spec, note: outcome.note };
}

/**
 * During an API outage the queue holds; one part at a time is let through as the probe. Returns
 * when the request may go; otherwise holds the queue or fails the part (outage too long).
 */
export async function passOutageGate(a: PartAttempt): Promise<void> {
  const gate = await a.deps.outage.gate();
  switch (gate.kind) {
    case 'open':
    case 'probe':
      return;
    case 'hold':
      return holdForOutage(a, gate.untilMs);
    case 'expired': {
      const message =
        `API unreachable since ${new Date(gate.since).toISOString()}, longer than ` +
        `retry.outage_max_ms=${a.deps.maxOutageMs} ms (${gate.lastError}); not fetched. ` +
        `Resume with: filings-export run --snapshot-id ${a.p.snapshotId} --retry`;
      await recordEnded(a, 'failed', message);
      throw new UnrecoverableError(message);
    }
    default:
      return assertNever(gate, 'outage gate');
  }
}

type CarryOutcome =
  { kind: 'wait' } | { kind: 'reused'; pointer: PartPointer } | { kind: 'fetch'; note?: string };

/**
 * Decides (reuse-decision.ts) and, for an unchanged company, copies the previous snapshot's archived
 * part into this snapshot's staging. A previous snapshot that cannot be read, or an archive that is
 * missing or fails its checksum, means a fetch, and the part's message says why.
 */
async function carryOver(
  reuse: ReusePorts,
  p: ExportPartPayload,
  key: string,
  store: ExportPartDeps['store'],
): Promise<CarryOutcome> {
  const from = p.reuse!.from;
  let previous;
  try {
    previous = await reuse.previousManifest(p.outDir, from);
  } catch (err: unknown) {
    return {
      kind: 'fetch',
      note: `fetched: previous snapshot ${from} cannot be read (${coerceError(err).message})`,
    };
  }
  const catalog = await store.getPart(p.snapshotId, CHANGE_DATASET, key);
  const decision = decideReuse(p.dataset, key, catalog, previous);
  switch (decision.kind) {
    case 'wait':
      return decision;
    case 'fetch':
      return { kind: 'fetch' };
    case 'reuse': {
      const prev = decision.previous;
      const pointer: PartPointer = {
        dataset: p.dataset,
        ticker: key,
        status: 'done',
        rows: prev.rows,
        bytes: 0,
        reusedFrom: from,
      };
      if (prev.rows === 0) return { kind: 'reused', pointer };
      if (decision.files.length > 0) {
        // Nothing is staged: publish takes the rows from these files, checked here by size only.
        const there = await reuse.checkSourceFiles(p.outDir, decision.files);
        if (!there.ok) return { kind: 'fetch', note: `fetched, not reused: ${there.reason}` };
        return { kind: 'reused', pointer };
      }
      // A source published before files were reused: its archived staged part is carried over.
      const to = toPosix(stagedPartRelPath(p.snapshotId, p.dataset, key));
      const copied = await reuse.carryOver(p.outDir, {
        archive: prev.archive!,
        bytes: prev.bytes!,
        sha256: prev.sha256!,
        to,
      });
      if (!copied.ok) return { kind: 'fetch', note: `fetched, not reused: ${copied.reason}` };
      return { kind: 'reused', pointer: { ...pointer, file: to, bytes: prev.bytes!, sha256: prev.sha256! } };
    }
    default:
      return assertNever(decision, 'reuse decision');
  }
}

/** A recorded part that needs no new request: definitive answers, or a done part whose file is intact. */
async function stillValid(
  prev: PartPointer,
  outDir: string,
  stagedBytes: ExportPartDeps['staged']['bytes'],
): Promise<boolean> {
  if (prev.status === 'not_found' || prev.status === 'bad_request') return true;
  if (prev.status !== 'done' || !prev.file) return false;
  // A file that is gone is fetched again; one that cannot be read fails this attempt with its cause.
  if (stagedBytes) return (await stagedBytes(outDir, prev.file)) === prev.bytes;
  const path = join(outDir, prev.file);
  try {
    return (await retryRead(path, () => stat(path))).size === prev.bytes;
  } catch (err: unknown) {
    if (isAbsent(err)) return false;
    throw err;
  }
}
