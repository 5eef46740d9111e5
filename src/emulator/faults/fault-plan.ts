/**
 * Which fault, if any, a data request gets. Three sources, first match wins:
 * 1. the per-request header `X-Emulator-Fault: 503|500|reset|truncate|slow` (+ `X-Emulator-Fault-Ms`);
 * 2. scripted rules (`POST /_emulator/faults`), each with optional operation/ticker filters and a
 *    number of `times` it fires;
 * 3. `--fault-rate P`: a 503 on that share of data requests, drawn from an injectable random source.
 */
export const FAULT_KINDS = ['503', '500', 'reset', 'truncate', 'slow'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export function isFaultKind(v: unknown): v is FaultKind {
  return typeof v === 'string' && (FAULT_KINDS as readonly string[]).includes(v);
}

export interface Fault {
  kind: FaultKind;
  /** slow: pause between body pieces; else unused. */
  ms?: number;
  /** Where it came from, for stats and logs. */
  source: 'header' | 'rule' | 'rate';
}

export interface FaultRule {
  /** Operation id filter, e.g. `facts/full`; absent = every operation. */
  operation?: string;
  /** Ticker filter (case-insensitive); absent = every company. */
  ticker?: string;
  fault: FaultKind;
  /** How many matching requests get the fault. @defaultValue 1 */
  times: number;
  /** X-Emulator-Fault-Ms equivalent for slow. */
  ms?: number;
}

/** What the plan needs to know of a request. */
export interface FaultRequest {
  operation: string;
  /** Every ticker the request's company answers to (upper case); empty when unknown. */
  tickers: readonly string[];
  headerKind: string | undefined;
  headerMs: number | undefined;
  /** false for telemetry: `--fault-rate` applies to data requests only. */
  dataRequest: boolean;
}

/** Deterministic PRNG (mulberry32) for `--fault-seed`. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class FaultPlan {
  private rules: FaultRule[] = [];

  constructor(
    private readonly faultRate: number,
    private readonly random: () => number,
  ) {}

  addRules(rules: readonly FaultRule[]): void {
    this.rules.push(...rules.map((r) => ({ ...r })));
  }

  clearRules(): void {
    this.rules = [];
  }

  /** Rules still armed, with their remaining `times`. */
  listRules(): readonly FaultRule[] {
    return this.rules;
  }

  /** Decides the fault of one request; a firing rule spends one of its `times`. */
  decide(req: FaultRequest): Fault | undefined {
    if (req.headerKind !== undefined && isFaultKind(req.headerKind)) {
      return { kind: req.headerKind, ms: req.headerMs, source: 'header' };
    }
    const i = this.rules.findIndex(
      (r) =>
        (r.operation === undefined || r.operation === req.operation) &&
        (r.ticker === undefined || req.tickers.includes(r.ticker.toUpperCase())),
    );
    const rule = this.rules[i];
    if (rule) {
      rule.times -= 1;
      if (rule.times <= 0) this.rules.splice(i, 1);
      return { kind: rule.fault, ms: rule.ms, source: 'rule' };
    }
    if (req.dataRequest && this.faultRate > 0 && this.random() < this.faultRate) {
      return { kind: '503', source: 'rate' };
    }
    return undefined;
  }
}

/**
 * Validates the body of `POST /_emulator/faults`; returns the rules or a message naming the field.
 */
export function parseFaultRules(body: unknown): FaultRule[] | string {
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { rules?: unknown }).rules)) {
    return 'rules: expected an array';
  }
  const out: FaultRule[] = [];
  const rules = (body as { rules: unknown[] }).rules;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i] as Record<string, unknown> | null;
    const at = `rules[${i}]`;
    if (typeof r !== 'object' || r === null) return `${at}: expected an object`;
    if (!isFaultKind(r.fault)) return `${at}.fault: expected one of ${FAULT_KINDS.join(', ')}`;
    if (r.operation !== undefined && typeof r.operation !== 'string')
      return `${at}.operation: expected a string`;
    if (r.ticker !== undefined && typeof r.ticker !== 'string') return `${at}.ticker: expected a string`;
    const times = r.times ?? 1;
    if (typeof times !== 'number' || !Number.isSafeInteger(times) || times < 1) {
      return `${at}.times: expected a positive integer`;
    }
    if (r.ms !== undefined && (typeof r.ms !== 'number' || !Number.isSafeInteger(r.ms) || r.ms < 0)) {
      return `${at}.ms: expected a non-negative integer`;
    }
    out.push({
      fault: r.fault,
      times,
      ...(r.operation !== undefined ? { operation: r.operation as string } : {}),
      ...(r.ticker !== undefined ? { ticker: r.ticker as string } : {}),
      ...(r.ms !== undefined ? { ms: r.ms as number } : {}),
    });
  }
  return out;
}
