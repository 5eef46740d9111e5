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
  type JobHelpers,
  type ReusePorts,
} from '../../src/pipeline/index.js';
import { toPosix } from '../../src/output/catalog/index.js';
import { stagedPartRelPath } from '../../src/output/staged-part/index.js';
import { isAbsent, retryRead } from '../../src/output/storage/index.js';
import { assertNever, type PartPointer } from '../../src/types.js';
import { holdForOutage, recordEnded, type PartAttempt } from './attempt.js';

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
export async function prepareOrReuse(attempt: PartAttempt): Promise<Prepared> {
  const { helpers, payload, log } = attempt;
  const state = await helpers.record.state(payload.snapshotId);
  if (state === undefined)
    throw new UnrecoverableError(
      `snapshot ${payload.snapshotId} has no record in Redis (expired or removed)`,
    );
  // Cancelled: the part was queued before its jobs were removed (or was in flight then); no request.
  if (state === 'cancelled')
    return {
      kind: 'settled',
      pointer: {
        ...attempt.base,
        status: 'failed',
        rows: 0,
        bytes: 0,
        message: 'not fetched: the snapshot was cancelled',
      },
    };
  if (state === 'stopped') {
    const pointer: PartPointer = {
      ...attempt.base,
      status: 'failed',
      rows: 0,
      bytes: 0,
      message: 'not fetched: the snapshot was stopped',
    };
    await helpers.record.recordPart(payload.snapshotId, pointer);
    return { kind: 'settled', pointer };
  }

  // A retried snapshot keeps what it already has: a finished part is not fetched again.
  const previous = await helpers.record.getPart(payload.snapshotId, payload.dataset, attempt.key);
  if (previous && (await stillValid(previous, payload.outDir, helpers.staged.bytes))) {
    log.debug('part already exported; reusing it');
    return { kind: 'settled', pointer: previous };
  }

  const spec = datasetDefinition(payload.dataset);
  // Incremental night: an unchanged company's part is carried over instead of fetched.
  if (payload.reuse === undefined || helpers.reuse === undefined || payload.dataset === CHANGE_DATASET)
    return { kind: 'fetch', spec };
  const outcome = await carryOver(helpers.reuse, payload, attempt.key, helpers.record);
  if (outcome.kind === 'wait') {
    // The company's catalog part has not ended: back in a moment, without spending an attempt.
    await attempt.job.moveToDelayed(Date.now() + CATALOG_WAIT_MS, attempt.token);
    throw new DelayedError(`${attempt.label}: waiting for the ${CHANGE_DATASET} part of ${attempt.key}`);
  }
  if (outcome.kind === 'reused') {
    await helpers.record.recordPart(payload.snapshotId, outcome.pointer);
    helpers.metrics?.parts.inc({ dataset: payload.dataset, outcome: 'reused' });
    log.debug({ from: payload.reuse.from, rows: outcome.pointer.rows }, 'part carried over');
    return { kind: 'settled', pointer: outcome.pointer };
  }
  return { kind: 'fetch', spec, note: outcome.note };
}

/**
 * During an API outage the queue holds; one part at a time is let through as the probe. Returns
 * when the request may go; otherwise holds the queue or fails the part (outage too long).
 */
export async function passOutageGate(attempt: PartAttempt): Promise<void> {
  const gate = await attempt.helpers.outage.gate();
  switch (gate.kind) {
    case 'open':
    case 'probe':
      return;
    case 'hold':
      return holdForOutage(attempt, gate.untilMs);
    case 'expired': {
      const message =
        `API unreachable since ${new Date(gate.since).toISOString()}, longer than ` +
        `retry.outage_max_ms=${attempt.helpers.config.retry.outage_max_ms} ms (${gate.lastError}); not fetched. ` +
        `Resume with: filings-export run --snapshot-id ${attempt.payload.snapshotId} --retry`;
      await recordEnded(attempt, 'failed', message);
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
  payload: ExportPartPayload,
  key: string,
  record: JobHelpers['record'],
): Promise<CarryOutcome> {
  const from = payload.reuse!.from;
  let previous;
  try {
    previous = await reuse.previousManifest(payload.outDir, from);
  } catch (err: unknown) {
    return {
      kind: 'fetch',
      note: `fetched: previous snapshot ${from} cannot be read (${coerceError(err).message})`,
    };
  }
  const catalog = await record.getPart(payload.snapshotId, CHANGE_DATASET, key);
  const decision = decideReuse(payload.dataset, key, catalog, previous);
  switch (decision.kind) {
    case 'wait':
      return decision;
    case 'fetch':
      return { kind: 'fetch' };
    case 'reuse': {
      const prev = decision.previous;
      const pointer: PartPointer = {
        dataset: payload.dataset,
        ticker: key,
        status: 'done',
        rows: prev.rows,
        bytes: 0,
        reusedFrom: from,
      };
      if (prev.rows === 0) return { kind: 'reused', pointer };
      if (decision.files.length > 0) {
        // Nothing is staged: publish takes the rows from these files, checked here by size only.
        const there = await reuse.checkSourceFiles(payload.outDir, decision.files);
        if (!there.ok) return { kind: 'fetch', note: `fetched, not reused: ${there.reason}` };
        return { kind: 'reused', pointer };
      }
      // A source published before files were reused: its archived staged part is carried over.
      const to = toPosix(stagedPartRelPath(payload.snapshotId, payload.dataset, key));
      const copied = await reuse.carryOver(payload.outDir, {
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
  stagedBytes: JobHelpers['staged']['bytes'],
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
