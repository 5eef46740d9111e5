/**
 * The emulator's clock: the global as-of date and per-company dates (`/_emulator/clock`), and the
 * store view that answers for them. The view of one setting is built once and kept until the clock
 * changes, so its caches (search service, rows) survive between requests.
 */
import { checkAsOf, companyAsOfView, parseCompanyDates, type CompanyDates } from './data/index.js';
import { EmulatorConfigError } from './errors.js';
import type { AsOfClock } from './server/control.js';
import type { EmulatorStore } from './store.js';

/**
 * A clock over `store` starting at `initial` (null: everything bundled) with `companies` (ticker or
 * CIK → date or null). Throws EmulatorConfigError naming a bad initial setting.
 */
export function asOfClock(store: EmulatorStore, initial: string | null, companies?: unknown): AsOfClock {
  let asOf = checked(store, initial, 'asOf');
  let dates: CompanyDates =
    companies === undefined ? new Map() : checkedDates(store, companies, 'asOfCompanies');
  let view: EmulatorStore | undefined;
  return {
    get: () => asOf,
    companies: () => Object.fromEntries(dates),
    set(next, nextCompanies) {
      // Everything is checked before anything changes: a bad request leaves the clock as it was.
      const a = checked(store, next, 'as_of');
      const d = nextCompanies === undefined ? new Map() : checkedDates(store, nextCompanies, 'companies');
      asOf = a;
      dates = d;
      view = undefined;
    },
    view() {
      const at = (date: string | null): EmulatorStore =>
        date === null || store.at === undefined ? store : store.at(date);
      view ??= companyAsOfView(at(asOf), at, dates);
      return view;
    },
  };
}

function checked(store: EmulatorStore, asOf: string | null, what: string): string | null {
  if (asOf === null) return null;
  if (store.at === undefined) throw undated(what);
  return checkAsOf(asOf, what);
}

function checkedDates(store: EmulatorStore, input: unknown, what: string): CompanyDates {
  const dates = parseCompanyDates(store, input, what);
  if (dates.size > 0 && store.at === undefined) throw undated(what);
  return dates;
}

function undated(what: string): EmulatorConfigError {
  return new EmulatorConfigError(`${what}: this store cannot answer as of a date (it has no at())`);
}
