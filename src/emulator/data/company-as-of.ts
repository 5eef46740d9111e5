/**
 * Per-company as-of dates (`POST /_emulator/clock` `companies`): one company answers as of its own
 * date while every other answers as of the global one, so a night where exactly one company filed
 * can be played. The composite view routes each per-company question (by CIK, or the CIK inside a
 * series_id / evidence key) to the view of that company's date; everything else asks the global view.
 * A synthetic clone has its own CIK, so an override of its source leaves the clone at the global date.
 */
import { EmulatorConfigError } from '../errors.js';
import type { EmulatorStore } from '../store.js';
import { cikOfId } from './fields/index.js';
import { checkAsOf } from './rows/index.js';

/** CIK → its own as-of date (null: everything bundled). */
export type CompanyDates = ReadonlyMap<string, string | null>;

/**
 * Validates `companies` of a clock request or option: an object mapping a ticker or CIK the store
 * knows to a date `YYYY-MM-DD` or null. Throws EmulatorConfigError naming the first bad entry.
 */
export function parseCompanyDates(store: EmulatorStore, input: unknown, what = 'companies'): Map<string, string | null> {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new EmulatorConfigError(
      `${what} must be an object mapping a ticker or CIK to a date YYYY-MM-DD or null, got ${JSON.stringify(input)}`,
    );
  const dates = new Map<string, string | null>();
  for (const [name, value] of Object.entries(input as Record<string, unknown>)) {
    const company = /^\d{1,10}$/.test(name) ? store.resolve({ cik: name }) : store.resolve({ ticker: name });
    if (company === undefined) throw new EmulatorConfigError(`${what}: unknown company "${name}" (a ticker or CIK)`);
    const date = value === null ? null : checkAsOf(value, `${what}.${name}`);
    if (dates.has(company.cik) && dates.get(company.cik) !== date)
      throw new EmulatorConfigError(`${what}: ${name} names company ${company.cik} a second time with another date`);
    dates.set(company.cik, date);
  }
  return dates;
}

/**
 * The store as of `global`'s date, except the companies in `dates`, each answered by `at(its date)`.
 * With no overrides it is `global` itself.
 */
export function companyAsOfView(
  global: EmulatorStore,
  at: (asOf: string | null) => EmulatorStore,
  dates: CompanyDates,
): EmulatorStore {
  if (dates.size === 0) return global;
  const of = (cik: string): EmulatorStore => {
    const d = dates.get(cik);
    return d === undefined ? global : at(d);
  };
  const ofId = (id: string): EmulatorStore => {
    const cik = cikOfId(id);
    return cik === undefined ? global : of(cik);
  };
  const globalAsOf = (): string | null => global.asOf?.() ?? null;
  return {
    companies: () => global.companies(),
    ...(global.warmUpOrder ? { warmUpOrder: () => global.warmUpOrder?.() ?? [] } : {}),
    resolve: (scope) => global.resolve(scope),
    factsFull: (cik, metricId) => of(cik).factsFull(cik, metricId),
    factsCore: (cik, metricId) => of(cik).factsCore(cik, metricId),
    factsLatest: (cik, metricId) => of(cik).factsLatest(cik, metricId),
    seriesCatalog: (cik, metricId) => of(cik).seriesCatalog(cik, metricId),
    dimsCatalog: (cik, metricId) => of(cik).dimsCatalog(cik, metricId),
    evidence: (cik, metricId) => of(cik).evidence(cik, metricId),
    issuerReference: (cik) => of(cik).issuerReference(cik),
    seriesById: (seriesId) => ofId(seriesId).seriesById(seriesId),
    seriesBlob: (seriesId, version) => ofId(seriesId).seriesBlob(seriesId, version),
    evidenceLocation: (key) => ofId(key).evidenceLocation(key),
    readDocument: (path) => global.readDocument(path),
    asOf: globalAsOf,
    asOfFor: (cik) => {
      const d = dates.get(cik);
      return d === undefined ? globalAsOf() : d;
    },
    at,
  };
}
