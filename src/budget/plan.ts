import { BudgetError } from '../errors.js';
import { nextUtcMidnight } from './time.js';
import { fastRampFactor, rampDurationMs } from './auto-rate.js';
import { WINDOW_MS, type AutoRateState, type Plan, type PlanInput } from './budget-types.js';
import { counted } from '../counted.js';

const fmt = (n: number): string => n.toLocaleString('en-US');

function fmtDuration(ms: number): string {
  const min = ms / 60_000;
  if (min < 1) return `${Math.max(1, Math.round(ms / 1000))} s`;
  if (min < 120) return `${min.toFixed(1)} min`;
  return `${(min / 60).toFixed(1)} h`;
}

/**
 * Compares a snapshot's requests with the budget left: expected duration at the effective rate,
 * whether it fits today's and this month's quota, how many UTC days it spans with daily pauses.
 * Refuses (ok: false) only when it cannot fit the month and multi-day is not allowed.
 */
export function planRequests(input: PlanInput): Plan {
  const { requests, state } = input;
  if (!Number.isInteger(requests) || requests < 0)
    throw new RangeError(`plan: requests must be an integer >= 0, got ${requests}`);
  const telemetry = Math.min(requests, input.telemetryRequests ?? 0);
  const rate = state.effectiveRequestsPerMinute;
  const { ramping, expectedDurationMs } = expectedDuration(input);
  const remainingToday = state.daily.exhaustedUntil ? 0 : state.daily.remaining;
  const remainingThisMonth = state.monthly.exhaustedUntil ? 0 : state.monthly.remaining;
  const monthlyRequests = requests - telemetry;
  const fitsToday = remainingToday === null || requests <= remainingToday;
  const fitsMonth = remainingThisMonth === null || monthlyRequests <= remainingThisMonth;
  const { days, expectedFinish } = daysSpanned(input, expectedDurationMs, fitsToday, remainingToday);
  const parts: string[] = [
    rateLine(input, ramping, expectedDurationMs),
    dailyLine(input, { fitsToday, remainingToday, days, expectedFinish }),
    monthlyLine(input, { fitsMonth, remainingThisMonth, monthlyRequests }),
  ];
  return {
    requests,
    effectiveRequestsPerMinute: rate,
    expectedDurationMs,
    fitsToday,
    fitsMonth,
    remainingToday,
    remainingThisMonth,
    days,
    expectedFinishAt: new Date(expectedFinish).toISOString(),
    ok: fitsMonth || input.allowMultiDay,
    message: `snapshot plan: ${parts.join('; ')}`,
  };
}

/** How long the requests take at the effective rate, or ramping up to it when `auto` has no rate headers. */
function expectedDuration(input: PlanInput): { ramping: boolean; expectedDurationMs: number } {
  const { requests, state } = input;
  const auto = state.auto;
  // Without rate headers `auto` ramps: the duration counts the windows it takes to get up to speed.
  const ramp =
    auto && auto.ceilingPerMinute !== null && input.autoRampFactor !== undefined
      ? {
          rate: auto.ratePerMinute,
          factor: input.autoRampFactor,
          ceiling: auto.ceilingPerMinute,
          share: state.share,
          // Fast (factor squared) until a 429 teaches a ceiling, assuming latency holds.
          fast: auto.mode !== 'backed_off',
        }
      : null;
  const expectedDurationMs = ramp
    ? rampDurationMs(requests, ramp)
    : Math.round((requests / state.effectiveRequestsPerMinute) * WINDOW_MS);
  return { ramping: ramp !== null, expectedDurationMs };
}

/** UTC days the snapshot spans and when it ends: today's remainder first, then whole daily quotas after each 00:00 UTC reset. */
function daysSpanned(
  input: PlanInput,
  expectedDurationMs: number,
  fitsToday: boolean,
  remainingToday: number | null,
): { days: number; expectedFinish: number } {
  const { requests, state, now } = input;
  const rate = state.effectiveRequestsPerMinute;
  let days = 1;
  let expectedFinish = now + expectedDurationMs;
  const dailyLimit = state.daily.limit;
  if (!fitsToday && remainingToday !== null && dailyLimit !== null && dailyLimit > 0) {
    const leftover = requests - remainingToday;
    const moreDays = Math.ceil(leftover / dailyLimit);
    days = 1 + moreDays;
    const lastDayRequests = leftover - (moreDays - 1) * dailyLimit;
    let midnight = nextUtcMidnight(now);
    for (let d = 1; d < moreDays; d++) midnight = nextUtcMidnight(midnight);
    expectedFinish = Math.max(expectedFinish, midnight + Math.round((lastDayRequests / rate) * WINDOW_MS));
  } else if (!fitsToday) {
    days = Number.POSITIVE_INFINITY;
  }
  // The rate alone can carry the snapshot past midnight too.
  if (Number.isFinite(days)) days = Math.max(days, utcDaysSpanned(now, expectedFinish));
  return { days, expectedFinish };
}

/** The plan's first clause: requests, rate and duration, and what `auto` does. */
function rateLine(input: PlanInput, ramping: boolean, expectedDurationMs: number): string {
  const { requests, state } = input;
  const auto = state.auto;
  const line = `${counted(requests, 'request', 'requests', fmt(requests))} ${ramping ? 'ramping from' : 'at'} ${fmt(state.effectiveRequestsPerMinute)} requests/min: about ${fmtDuration(expectedDurationMs)}`;
  if (!auto) return line;
  // Before the first answer nobody knows whether the key reports its limit: say both outcomes.
  const headerless =
    auto.mode === 'starting' && input.autoRampFactor !== undefined && input.autoCeiling !== undefined
      ? rampDurationMs(requests, {
          rate: auto.ratePerMinute,
          factor: input.autoRampFactor,
          ceiling: input.autoCeiling,
          share: state.share,
          fast: true,
        })
      : null;
  return `${line} (${autoNote(auto, input.autoRampFactor)}${headerless !== null ? `; about ${fmtDuration(headerless)} if the key's answers carry no rate headers` : ''})`;
}

/** The plan's clause on today's quota. */
function dailyLine(
  input: PlanInput,
  d: { fitsToday: boolean; remainingToday: number | null; days: number; expectedFinish: number },
): string {
  const { state } = input;
  const dailyLimit = state.daily.limit;
  if (d.remainingToday === null) return 'no daily quota known';
  const left = `${fmt(d.remainingToday)} left${dailyLimit !== null ? ` of ${fmt(dailyLimit)}` : ''}`;
  if (d.fitsToday) return `fits today's quota (${left})`;
  return (
    `does not fit today's quota (${left}): it pauses at ${state.daily.resetsAt} and resumes by itself` +
    (Number.isFinite(d.days)
      ? `, spanning ${d.days} UTC days, done about ${new Date(d.expectedFinish).toISOString()}`
      : '')
  );
}

/** The plan's clause on this month's quota, and the refusal when it cannot fit. */
function monthlyLine(
  input: PlanInput,
  m: { fitsMonth: boolean; remainingThisMonth: number | null; monthlyRequests: number },
): string {
  const { state } = input;
  if (m.remainingThisMonth === null) return 'no monthly quota known';
  if (m.fitsMonth)
    return `fits this month's quota (${fmt(m.remainingThisMonth)} left${state.monthly.limit !== null ? ` of ${fmt(state.monthly.limit)}` : ''})`;
  return (
    `does NOT fit this month's quota: needs ${fmt(m.monthlyRequests)} but only ${fmt(m.remainingThisMonth)}` +
    `${state.monthly.limit !== null ? ` of ${fmt(state.monthly.limit)}` : ''} remain until ${state.monthly.resetsAt}` +
    (input.allowMultiDay
      ? '; multi-day is allowed, so it pauses at the monthly reset and resumes'
      : '; refused: rerun with --allow-multi-day (or budget.allowMultiDay: true) to spread it over months, or export fewer tickers/datasets')
  );
}

/** What `auto` does, in the plan's words. */
function autoNote(auto: AutoRateState, factor: number | undefined): string {
  const perMinute = factor !== undefined ? ` x${factor} per full minute without a 429` : '';
  const ramp =
    factor !== undefined && auto.mode !== 'backed_off'
      ? ` x${fastRampFactor(factor)} per full minute without a 429 while latency holds (x${factor} once a 429 taught a ceiling)`
      : perMinute;
  switch (auto.mode) {
    case 'starting':
      return `rate auto: ${auto.message}; then the key's X-RateLimit-Limit, or, if its answers carry no rate headers, a ramp${ramp} that halves on a 429; likely sooner`;
    case 'headers':
      return `rate auto: ${auto.message}`;
    case 'ramping':
    case 'backed_off':
      return `rate auto: ${auto.message}${ramp ? `,${ramp}` : ''}; the time counts the ramp`;
    default: {
      const never: never = auto.mode;
      throw new Error(`plan: unknown auto mode ${String(never)}`);
    }
  }
}

/** Throws BudgetError PLAN_DOES_NOT_FIT (with the plan's message) when the plan was refused. */
export function assertPlanFits(plan: Plan): void {
  if (!plan.ok) throw new BudgetError('PLAN_DOES_NOT_FIT', plan.message);
}

/** UTC calendar days touched from `from` to `to`, both included. */
function utcDaysSpanned(from: number, to: number): number {
  const dayStart = (ms: number): number => Math.floor(ms / 86_400_000);
  return dayStart(to) - dayStart(from) + 1;
}
