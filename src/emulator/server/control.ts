/**
 * The emulator's control plane under `/_emulator/` (local only, no key):
 * - `POST /_emulator/faults` `{"rules":[{operation?, ticker?, fault, times?, ms?}]}` arms rules (appends)
 * - `GET /_emulator/faults` lists armed rules; `DELETE /_emulator/faults` disarms all
 * - `GET /_emulator/stats` requests, statuses, 429s and faults per key and per operation, plus
 *   each key's current window and each account's and key's quota usage
 * - `POST /_emulator/reset` clears rate windows, quota counters and stats (not fault rules)
 * - `GET /_emulator/clock` `{"as_of": "YYYY-MM-DD" | null, "companies": {CIK: date | null}}`;
 *   `POST /_emulator/clock` `{"as_of": …, "companies"?: {ticker or CIK: date | null}}` sets the whole
 *   clock (null: everything bundled; no `companies`: none): filings filed after a company's date
 *   (its own if listed, else `as_of`) do not exist
 * - `GET /_emulator/health` `{ ok: true }`
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticator } from '../auth/authenticator.js';
import { parseFaultRules, type FaultPlan } from '../faults/fault-plan.js';
import type { Limiter } from '../limits/key-limiter.js';
import { parseJsonObject, readBody } from './body.js';
import { HttpError } from './http-error.js';
import { sendJson } from './respond.js';
import type { EmulatorStore } from '../store.js';
import type { Stats } from './stats.js';

/** The as-of dates the emulator answers for (global, and per company), and the store view of them. */
export interface AsOfClock {
  get(): string | null;
  /** CIK → the company's own as-of date (null: everything bundled). */
  companies(): Record<string, string | null>;
  /**
   * Replaces the whole clock; `companies` maps a ticker or CIK to a date or null (absent: none).
   * Throws EmulatorConfigError naming what is wrong, and then changes nothing.
   */
  set(asOf: string | null, companies?: unknown): void;
  view(): EmulatorStore;
}

export interface ControlPlane {
  authenticator: Authenticator;
  limiter: Limiter;
  faults: FaultPlan;
  asOf: AsOfClock;
  stats: Stats;
}

export async function handleControl(
  c: ControlPlane,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const method = req.method ?? 'GET';
  const route = `${method} ${path}`;
  switch (route) {
    case 'GET /_emulator/health':
      return sendJson(res, 200, { ok: true });
    case 'GET /_emulator/stats':
      return sendJson(res, 200, c.stats.snapshot({ limits: limitsSnapshot(c) }));
    case 'POST /_emulator/reset':
      await readBody(req);
      c.limiter.reset();
      c.stats.reset();
      return sendJson(res, 200, { ok: true });
    case 'GET /_emulator/clock':
      return sendJson(res, 200, { as_of: c.asOf.get(), companies: c.asOf.companies() });
    case 'POST /_emulator/clock': {
      const body = parseJsonObject(await readBody(req));
      if (!('as_of' in body))
        throw new HttpError(400, 'as_of is required: a date YYYY-MM-DD, or null for everything bundled');
      try {
        c.asOf.set(body.as_of as string | null, body.companies);
      } catch (err: unknown) {
        throw new HttpError(400, (err as Error).message);
      }
      return sendJson(res, 200, { ok: true, as_of: c.asOf.get(), companies: c.asOf.companies() });
    }
    case 'GET /_emulator/faults':
      return sendJson(res, 200, { rules: c.faults.listRules() });
    case 'DELETE /_emulator/faults':
      await readBody(req);
      c.faults.clearRules();
      return sendJson(res, 200, { ok: true, rules: [] });
    case 'POST /_emulator/faults': {
      const rules = parseFaultRules(parseJsonObject(await readBody(req)));
      if (typeof rules === 'string') throw new HttpError(400, rules);
      c.faults.addRules(rules);
      return sendJson(res, 200, { ok: true, rules: c.faults.listRules() });
    }
    default:
      throw new HttpError(404, `Unknown control route: ${route}`);
  }
}

function limitsSnapshot(c: ControlPlane): Record<string, unknown> {
  const keys: Record<string, unknown> = {};
  const accounts: Record<string, unknown> = {};
  for (const auth of c.authenticator.entries()) {
    const w = c.limiter.window(auth);
    keys[auth.key.id] = {
      account: auth.account.id,
      window: w ? { limit: w.limit, remaining: w.remaining, reset: Math.floor(w.resetAtMs / 1000) } : null,
      daily_used: c.limiter.usage(`key:${auth.key.id}`, 'daily'),
      monthly_used: c.limiter.usage(`key:${auth.key.id}`, 'monthly'),
    };
    accounts[auth.account.id] = {
      daily_used: c.limiter.usage(`account:${auth.account.id}`, 'daily'),
      monthly_used: c.limiter.usage(`account:${auth.account.id}`, 'monthly'),
    };
  }
  return { keys, accounts };
}
