/**
 * The Redis record of snapshots, kept apart from BullMQ's jobs (which are removed when finished):
 * it makes a snapshot id stay taken after completion, so re-enqueueing never re-runs a snapshot
 * by accident, and it holds what `status` shows (counts and rows per dataset, quota waits).
 *
 * Keys (`<prefix>:<queue base>:` namespace, never a BullMQ queue name):
 *   snapshot:<id>        hash: spec (without its companies), companies (JSON array), company_count, status,
 *                        timestamps, counters `n:<dataset>:<status>`, `rows:<dataset>`, `requests`,
 *                        `part_retries`, `rate_limited_429`, `missing` (JSON: the companies the API did
 *                        not know, at most MISSING_KEPT), `missing_count`, `cancelled_by`/`cancelled_at` while cancelled,
 *                        `load_*` (the warehouse load), `iceberg_state`/`iceberg_at`/`iceberg_message` (the table commit)
 *   snapshot:<id>:parts  hash: `<dataset>/<company>` -> PartPointer JSON (the last result of each part)
 *   snapshot:<id>:not_reused hash: `<dataset>/<company>` -> `<ticker> <dataset>: <message>` for each part
 *                        an incremental snapshot fetched although it could have been carried over
 *   snapshot:<id>:waits  hash: `<quota>:<until ms>` -> QuotaWait JSON (each quota reset waited for, once)
 *   snapshot:<id>:requeues hash: `<dataset>/<company>` -> per-minute 429s the part was put back after
 *   snapshots            zset: id by creation time
 *
 * What the record says (the spec, the states, the view) is in snapshot-states.ts, its hash's scripts
 * and fields in snapshot-hash.ts.
 */
import type { Redis } from 'ioredis';
import { InfraError } from '../../errors.js';
import type { DatasetName, PartPointer, PartStatus } from '../../types.js';
import { MISSING_KEPT, type MissingCompany } from './missing.js';
import { CANCEL, CREATE, RECORD_PART, recordView, SET_IF_EXISTS, TRANSITION, VIEW } from './snapshot-hash.js';
import {
  ACTIVE_STATES,
  RECORDED_PART_STATUSES,
  RETRYABLE_STATES,
  type QuotaWait,
  type RecordedPartStatus,
  type SnapshotIcebergRecord,
  type SnapshotLoadRecord,
  type SnapshotRecord,
  type SnapshotSpec,
  type SnapshotSpecHead,
  type SnapshotState,
  type SnapshotView,
} from './snapshot-states.js';
import type { Company } from './universe.js';

export interface SnapshotStoreOptions {
  /** BullMQ prefix, e.g. `fx`. */
  prefix: string;
  /** Queue base name, e.g. `filings-export`. */
  queueBase: string;
  /** How long a record (and so the snapshot id) stays; also bounds the parts hash. */
  recordTtlSeconds: number;
  /** Clock for timestamps. @defaultValue Date.now */
  now?: () => number;
  /**
   * Whether the writes so far reached a replica of the node holding `key` (src/infra's
   * ReplicaAck): a part's record must survive a failover before its job may complete.
   * @defaultValue always true
   */
  confirmWrite?: (key: string) => Promise<boolean>;
}

export class SnapshotStore {
  private readonly ns: string;
  private readonly ttl: number;
  private readonly now: () => number;
  private readonly confirmWrite: (key: string) => Promise<boolean>;

  constructor(
    private readonly redis: Redis,
    opts: SnapshotStoreOptions,
  ) {
    this.ns = `${opts.prefix}:${opts.queueBase}:`;
    this.ttl = opts.recordTtlSeconds;
    this.now = opts.now ?? Date.now;
    this.confirmWrite = opts.confirmWrite ?? (() => Promise.resolve(true));
  }

  private key(id: string): string {
    return `${this.ns}snapshot:${id}`;
  }

  private partsKey(id: string): string {
    return `${this.ns}snapshot:${id}:parts`;
  }

  private notReusedKey(id: string): string {
    return `${this.ns}snapshot:${id}:not_reused`;
  }

  /** Creates the record atomically; false when the id is already taken. */
  async create(spec: SnapshotSpec): Promise<boolean> {
    const total = spec.companies.length * spec.datasets.length;
    const { companies, ...head } = spec;
    const res = await this.redis.eval(
      CREATE,
      2,
      this.key(spec.id),
      `${this.ns}snapshots`,
      JSON.stringify(head),
      String(this.now()),
      String(total),
      String(this.ttl),
      spec.id,
      JSON.stringify(companies),
      String(companies.length),
    );
    return res === 1;
  }

  /** Removes a record that never got its flow enqueued (enqueue failed). */
  async discard(id: string): Promise<void> {
    await this.redis
      .multi()
      .del(this.key(id), this.partsKey(id), this.waitsKey(id), this.requeuesKey(id), this.notReusedKey(id))
      .zrem(`${this.ns}snapshots`, id)
      .exec();
  }

  /** The whole record, with the spec's company list (publish and enqueue need it). */
  async get(id: string): Promise<SnapshotRecord | undefined> {
    const h = await this.redis.hgetall(this.key(id));
    if (!h.spec) return undefined;
    // Records written before the list had its own field keep it inside `spec`.
    const parsed = JSON.parse(h.spec) as SnapshotSpecHead & { companies?: Company[] };
    const companies = h.companies ? (JSON.parse(h.companies) as Company[]) : (parsed.companies ?? []);
    return { ...recordView(h, parsed, companies.length), spec: { ...parsed, companies } };
  }

  /**
   * The record without the spec's company list: what `status`, `--wait` and the dashboard read.
   * One small reply whatever the number of companies.
   */
  async view(id: string): Promise<SnapshotView | undefined> {
    const flat = (await this.redis.eval(VIEW, 1, this.key(id))) as string[];
    const h: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i] ?? ''] = flat[i + 1] ?? '';
    if (!h.spec) return undefined;
    const parsed = JSON.parse(h.spec) as SnapshotSpecHead & { companies?: Company[] };
    const { companies, ...head } = parsed;
    return recordView(h, head, h.company_count ? Number(h.company_count) : (companies?.length ?? 0));
  }

  /** Most recent snapshot ids, newest first. */
  async list(limit = 20): Promise<string[]> {
    return this.redis.zrevrange(`${this.ns}snapshots`, 0, limit - 1);
  }

  /**
   * Records the result of a part (its pointer); later results of the same part replace it. False
   * when the record refused it: the snapshot was cancelled (or its record is gone).
   */
  async recordPart(snapshotId: string, pointer: PartPointer): Promise<boolean> {
    if (!isRecorded(pointer.status)) throw new Error(`cannot record a part as ${pointer.status}`);
    const res = await this.redis.eval(
      RECORD_PART,
      3,
      this.key(snapshotId),
      this.partsKey(snapshotId),
      this.notReusedKey(snapshotId),
      `${pointer.dataset}/${pointer.ticker}`,
      JSON.stringify(pointer),
      pointer.dataset,
      pointer.status,
      String(pointer.rows),
      String(this.now()),
      String(this.ttl),
      pointer.reusedFrom !== undefined ? '1' : '0',
      notReusedLine(pointer) ?? '',
    );
    // A record a failover could lose would let the snapshot publish short (or count a part twice):
    // the job fails retryably and records again rather than complete on it.
    if (res === 1 && !(await this.confirmWrite(this.partsKey(snapshotId))))
      throw new InfraError(
        'REDIS_UNAVAILABLE',
        `the record of part ${pointer.dataset}/${pointer.ticker} of snapshot ${snapshotId} reached no Redis replica in time; the part is retried so a failover cannot lose it`,
      );
    return res === 1;
  }

  /**
   * The parts an incremental snapshot fetched although they could have been carried over, as
   * `<ticker> <dataset>: <why>` lines (kept as parts end, so `status` never reads every part), and
   * how many there are. `limit` bounds the lines read (a big hash answers about that many).
   */
  async notReused(id: string, limit?: number): Promise<{ lines: string[]; total: number }> {
    const key = this.notReusedKey(id);
    if (limit === undefined) {
      const lines = await this.redis.hvals(key);
      return { lines, total: lines.length };
    }
    const [total, [, flat]] = await Promise.all([
      this.redis.hlen(key),
      this.redis.hscan(key, '0', 'COUNT', Math.max(1, limit)),
    ]);
    const lines = flat.filter((_, i) => i % 2 === 1).slice(0, limit);
    return { lines, total };
  }

  /** The recorded result of one part, if any. */
  async getPart(
    snapshotId: string,
    dataset: DatasetName,
    companyKey: string,
  ): Promise<PartPointer | undefined> {
    const raw = await this.redis.hget(this.partsKey(snapshotId), `${dataset}/${companyKey}`);
    return raw ? (JSON.parse(raw) as PartPointer) : undefined;
  }

  /**
   * Counts one request a part sent, once its answer (or failure) is known; `rateLimited` when the
   * answer was a 429. With countRetry, the manifest's `totals.requests` and `rate_limited_429`.
   */
  async countRequest(snapshotId: string, o: { rateLimited?: boolean } = {}): Promise<void> {
    const m = this.redis.multi().hincrby(this.key(snapshotId), 'requests', 1);
    if (o.rateLimited === true) m.hincrby(this.key(snapshotId), 'rate_limited_429', 1);
    await m.exec();
  }

  /** Counts a failed attempt of a part that BullMQ will retry (the manifest's `totals.retries`). */
  async countRetry(snapshotId: string): Promise<void> {
    await this.redis.hincrby(this.key(snapshotId), 'part_retries', 1);
  }

  /** Every recorded part result. */
  async parts(snapshotId: string): Promise<PartPointer[]> {
    const h = await this.redis.hgetall(this.partsKey(snapshotId));
    return Object.values(h).map((v) => JSON.parse(v) as PartPointer);
  }

  async state(id: string): Promise<SnapshotState | undefined> {
    const s = await this.redis.hget(this.key(id), 'state');
    return (s ?? undefined) as SnapshotState | undefined;
  }

  /** Moves the state when it is one of `from`; true when it moved. */
  async transition(
    id: string,
    from: readonly SnapshotState[],
    to: SnapshotState,
    opts: { message?: string; finished?: boolean } = {},
  ): Promise<boolean> {
    const res = await this.redis.eval(
      TRANSITION,
      1,
      this.key(id),
      JSON.stringify(from),
      to,
      String(this.now()),
      opts.message ?? '',
      opts.finished ? '1' : '0',
    );
    return res === 1;
  }

  /** Stops a running snapshot (401/403): parts that have not started skip their request. */
  async stop(id: string, message: string): Promise<boolean> {
    return this.transition(id, ACTIVE_STATES, 'stopped', { message, finished: true });
  }

  /**
   * Cancels a queued, waiting or running snapshot on a person's word (`filings-export cancel`):
   * records who and when; from then on the record refuses part results. Published snapshots and
   * the budget are not touched. False when the snapshot is in another state.
   */
  async cancel(id: string, by: string): Promise<boolean> {
    const at = this.now();
    const message =
      `cancelled by ${by} at ${new Date(at).toISOString()}; ` +
      `start it again with: filings-export run --snapshot-id ${id} --retry`;
    const res = await this.redis.eval(
      CANCEL,
      1,
      this.key(id),
      JSON.stringify(ACTIVE_STATES),
      String(at),
      by,
      message,
    );
    return res === 1;
  }

  /**
   * Marks a published snapshot with its manifest path, and why `changes` is missing if it is. A
   * cancel that came once publishing had begun (`cancel` refuses, but the two may cross) yields:
   * the files are out, so the record says published.
   */
  async published(id: string, manifest: string, changesMissing?: string): Promise<boolean> {
    await this.redis.hset(this.key(id), {
      manifest,
      ...(changesMissing !== undefined ? { changes_missing: changesMissing } : {}),
    });
    const moved = await this.transition(id, ['running', 'cancelled'], 'published', { finished: true });
    // Its cancel line goes with it (a published snapshot carries no message).
    if (moved && (await this.redis.hdel(this.key(id), 'cancelled_by', 'cancelled_at')) > 0)
      await this.redis.hdel(this.key(id), 'message');
    return moved;
  }

  /** Records the companies the API did not know (the first MISSING_KEPT of them, and how many). */
  async recordMissing(id: string, missing: readonly MissingCompany[]): Promise<void> {
    await this.redis.hset(this.key(id), {
      missing: JSON.stringify(missing.slice(0, MISSING_KEPT)),
      missing_count: String(missing.length),
    });
  }

  /** Records the outcome of a warehouse load of the snapshot (the state stays `published`). */
  async recordLoad(id: string, load: SnapshotLoadRecord): Promise<void> {
    await this.redis.hset(
      this.key(id),
      'load_outcome',
      load.outcome,
      'load_at',
      String(load.atMs),
      'load_message',
      load.message,
    );
  }

  /**
   * Records where the snapshot stands in its Iceberg tables (the state stays `published`); false
   * when it has no record (expired): none is created for it.
   */
  async recordIceberg(id: string, iceberg: SnapshotIcebergRecord): Promise<boolean> {
    const fields = [
      'iceberg_state',
      iceberg.state,
      'iceberg_at',
      String(iceberg.atMs),
      'iceberg_message',
      iceberg.message,
    ];
    return (await this.redis.eval(SET_IF_EXISTS, 1, this.key(id), ...fields)) === 1;
  }

  /** Reopens a failed, stopped or cancelled snapshot for --retry; false in any other state. */
  async reopen(id: string): Promise<boolean> {
    const moved = await this.transition(id, RETRYABLE_STATES, 'enqueuing');
    if (moved) {
      await this.redis
        .multi()
        .hdel(
          this.key(id),
          'finished_at',
          'message',
          'manifest',
          'changes_missing',
          'missing',
          'missing_count',
          'cancelled_by',
          'cancelled_at',
        )
        .hincrby(this.key(id), 'retries', 1)
        .expire(this.key(id), this.ttl)
        .exec();
    }
    return moved;
  }

  private waitsKey(id: string): string {
    return `${this.ns}snapshot:${id}:waits`;
  }

  private requeuesKey(id: string): string {
    return `${this.ns}snapshot:${id}:requeues`;
  }

  /**
   * Records that the snapshot waits for a quota reset. Every part of the snapshot meets the same
   * wait: the first one records it (one entry per quota and reset time).
   */
  async recordQuotaWait(
    id: string,
    wait: Omit<QuotaWait, 'reason' | 'since' | 'until'> & { untilMs: number },
  ): Promise<QuotaWait> {
    const record: QuotaWait = {
      reason: 'quota',
      quota: wait.quota,
      scope: wait.scope,
      source: wait.source,
      since: new Date(this.now()).toISOString(),
      until: new Date(wait.untilMs).toISOString(),
      message: wait.message,
    };
    const key = this.waitsKey(id);
    const field = `${wait.quota}:${wait.untilMs}`;
    const [[, created]] = (await this.redis
      .multi()
      .hsetnx(key, field, JSON.stringify(record))
      .expire(key, this.ttl)
      .exec()) as [[Error | null, number], [Error | null, number]];
    if (created === 1) return record;
    const existing = await this.redis.hget(key, field);
    return existing ? (JSON.parse(existing) as QuotaWait) : record;
  }

  /** Every quota wait the snapshot went through, oldest first (for the manifest). */
  async quotaWaits(id: string): Promise<QuotaWait[]> {
    const all = await this.redis.hvals(this.waitsKey(id));
    return all
      .map((v) => JSON.parse(v) as QuotaWait)
      .sort((a, b) => a.since.localeCompare(b.since) || a.until.localeCompare(b.until));
  }

  /** The quota wait in force now, or null (for `status`). */
  async currentQuotaWait(id: string): Promise<QuotaWait | null> {
    const now = this.now();
    const active = (await this.quotaWaits(id)).filter((w) => Date.parse(w.until) > now);
    return active.reduce<QuotaWait | null>(
      (best, w) => (best === null || w.until > best.until ? w : best),
      null,
    );
  }

  /** Counts one more per-minute-429 put-back of a part; bounded by budget.max_rate_limit_requeues. */
  async countRequeue(id: string, part: string): Promise<number> {
    const key = this.requeuesKey(id);
    const [[, n]] = (await this.redis.multi().hincrby(key, part, 1).expire(key, this.ttl).exec()) as [
      [Error | null, number],
      unknown,
    ];
    return n;
  }

  /** Forgets a part's put-backs once its request went through. */
  async clearRequeues(id: string, part: string): Promise<void> {
    await this.redis.hdel(this.requeuesKey(id), part);
  }

  /** Drops a finished snapshot's per-part hash after `seconds` (the manifest has it all by then). */
  async expireParts(id: string, seconds: number): Promise<void> {
    await this.redis.multi().expire(this.partsKey(id), seconds).expire(this.notReusedKey(id), seconds).exec();
  }
}

/** A part fetched although it could have been carried over: its `status` line, else undefined. */
function notReusedLine(p: PartPointer): string | undefined {
  return p.message?.startsWith('fetched') === true ? `${p.ticker} ${p.dataset}: ${p.message}` : undefined;
}

function isRecorded(s: PartStatus): s is RecordedPartStatus {
  return (RECORDED_PART_STATUSES as readonly string[]).includes(s);
}
