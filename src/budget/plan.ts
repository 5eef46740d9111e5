import { BudgetError } from '../errors.js';
import { nextUtcMidnight } from './time.js';
import { fastRampFactor, rampDurationMs } from './auto-rate.js';
import { WINDOW_MS, type AutoRateState, type Plan, type PlanInput } from './budget-types.js';

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
  const { requests, state, now } = input;
  if (!Number.isInteger(requests) || requests < 0)
    throw new RangeError(`plan: requests must be an integer >= 0, got ${requests}`);
  const telemetry = Math.min(requests, input.telemetryRequests ?? 0);
  const rate = state.effectiveRequestsPerMinute;
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
    : Math.round((requests / rate) * WINDOW_MS);
  const remainingToday = state.daily.exhaustedUntil ? 0 : state.daily.remaining;
  const remainingThisMonth = state.monthly.exhaustedUntil ? 0 : state.monthly.remaining;
  const monthlyRequests = requests - telemetry;
  const fitsToday = remainingToday === null || requests <= remainingToday;
  const fitsMonth = remainingThisMonth === null || monthlyRequests <= remainingThisMonth;

  // Days: today's remainder first, then whole daily quotas after each 00:00 UTC reset.
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

  const ok = fitsMonth || input.allowMultiDay;
  const parts: string[] = [
    `${fmt(requests)} requests ${ramp ? 'ramping from' : 'at'} ${fmt(rate)} requests/min: about ${fmtDuration(expectedDurationMs)}`,
  ];
  if (auto) {
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
    parts[0] += ` (${autoNote(auto, input.autoRampFactor)}${headerless !== null ? `; about ${fmtDuration(headerless)} if the key's answers carry no rate headers` : ''})`;
  }
  if (remainingToday === null) parts.push('no daily quota known');
  else if (fitsToday)
    parts.push(
      `fits today's quota (${fmt(remainingToday)} left${dailyLimit !== null ? ` of ${fmt(dailyLimit)}` : ''})`,
    );
  else
    parts.push(
      `does not fit today's quota (${fmt(remainingToday)} left${dailyLimit !== null ? ` of ${fmt(dailyLimit)}` : ''}): it pauses at ${state.daily.resetsAt} and resumes by itself` +
        (Number.isFinite(days)
          ? `, spanning ${days} UTC days, done about ${new Date(expectedFinish).toISOString()}`
          : ''),
    );
  if (remainingThisMonth === null) parts.push('no monthly quota known');
  else if (fitsMonth)
    parts.push(
      `fits this month's quota (${fmt(remainingThisMonth)} left${state.monthly.limit !== null ? ` of ${fmt(state.monthly.limit)}` : ''})`,
    );
  else
    parts.push(
      `does NOT fit this month's quota: needs ${fmt(monthlyRequests)} but only ${fmt(remainingThisMonth)}` +
        `${state.monthly.limit !== null ? ` of ${fmt(state.monthly.limit)}` : ''} remain until ${state.monthly.resetsAt}` +
        (input.allowMultiDay
          ? '; multi-day is allowed, so it pauses at the monthly reset and resumes'
          : '; refused: rerun with --allow-multi-day (or budget.allowMultiDay: true) to spread it over months, or export fewer tickers/datasets'),
    );
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
    ok,
    message: `snapshot plan: ${parts.join('; ')}`,
  };
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
