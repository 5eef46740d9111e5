/**
 * Request statistics of `GET /_emulator/stats`: requests, statuses, 429s (rate vs quota) and
 * injected faults, per key id and per operation. The budget benchmark reads them.
 */
export interface Counter {
  requests: number;
  /** Every 429, and the two kinds apart. */
  status_429: number;
  rate_limited: number;
  quota_exceeded: number;
  faults: number;
  by_status: Record<string, number>;
}

/** What one finished request contributes. `status` 0 = the connection was reset before a status. */
export interface RequestRecord {
  keyId: string | undefined;
  operation: string;
  status: number;
  limitKind?: 'rate' | 'quota';
  fault?: boolean;
}

const NO_KEY = '(none)';

function newCounter(): Counter {
  return { requests: 0, status_429: 0, rate_limited: 0, quota_exceeded: 0, faults: 0, by_status: {} };
}

export class Stats {
  private startedAt: number;
  private total = newCounter();
  private byKey = new Map<string, Counter>();
  private byOperation = new Map<string, Counter>();
  private telemetry = 0;

  constructor(private readonly now: () => number) {
    this.startedAt = now();
  }

  record(r: RequestRecord): void {
    const key = r.keyId ?? NO_KEY;
    for (const c of [this.total, get(this.byKey, key), get(this.byOperation, r.operation)]) {
      c.requests += 1;
      const s = r.status === 0 ? 'reset' : String(r.status);
      c.by_status[s] = (c.by_status[s] ?? 0) + 1;
      if (r.status === 429) c.status_429 += 1;
      if (r.limitKind === 'rate') c.rate_limited += 1;
      if (r.limitKind === 'quota') c.quota_exceeded += 1;
      if (r.fault) c.faults += 1;
    }
    if (r.operation === 'telemetry/proof-open' && r.status === 202) this.telemetry += 1;
  }

  snapshot(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      since: new Date(this.startedAt).toISOString(),
      total: this.total,
      by_key: Object.fromEntries(this.byKey),
      by_operation: Object.fromEntries(this.byOperation),
      telemetry_opens: this.telemetry,
      ...extra,
    };
  }

  reset(): void {
    this.startedAt = this.now();
    this.total = newCounter();
    this.byKey = new Map();
    this.byOperation = new Map();
    this.telemetry = 0;
  }
}

function get(map: Map<string, Counter>, id: string): Counter {
  let c = map.get(id);
  if (!c) {
    c = newCounter();
    map.set(id, c);
  }
  return c;
}
