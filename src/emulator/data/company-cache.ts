/**
 * The store's caches, shared by every as-of view: a real company's SEC files parsed once (its
 * inputs), its rows built once per as-of date (LRU of the companies kept built), and SYNBIG's
 * generated list.
 */
import type { Logger } from 'pino';
import type { FactRow } from '../store.js';
import type { CompanyIndex, Registry } from './companies/index.js';
import { PromiseLru } from './lru.js';
import { CompanyData, filedBy, type CompanyIdentity, type CompanyInputs } from './rows/index.js';
import { restate, type Restatement } from './restatement.js';
import { loadFilingDocuments, loadLabelLinkbases, parseCompanyFacts, readDataFile } from './sec/index.js';

export class CompanyCache {
  /** SYNBIG's generated facts/full per as-of date. */
  readonly bigRows = new PromiseLru<readonly FactRow[]>(2);
  private readonly inputs: PromiseLru<CompanyInputs>;
  private readonly data: PromiseLru<CompanyData>;

  constructor(
    private readonly registry: Registry,
    private readonly companies: CompanyIndex,
    /** Built companies kept in memory (parsed inputs: at least 16). */
    cacheSize: number,
    private readonly logger: Logger,
    /** CIK → the restatements of its facts (restatement.ts); none: the inputs as bundled. */
    private readonly restatements: ReadonlyMap<string, readonly Restatement[]> = new Map(),
  ) {
    this.inputs = new PromiseLru<CompanyInputs>(Math.max(cacheSize, 16));
    this.data = new PromiseLru<CompanyData>(cacheSize);
  }

  /** Inputs as of a date: what had been filed by the end of that day (null: everything). */
  async inputsAsOf(cik: string, asOf: string | null): Promise<CompanyInputs> {
    const inputs = await this.loadInputs(cik);
    return asOf === null ? inputs : filedBy(inputs, asOf);
  }

  /** Built data of a real company as of a date (clones are views over their source's, see companies/clone.ts). */
  companyData(cik: string, asOf: string | null): Promise<CompanyData> {
    return this.data.get(asOf === null ? cik : `${cik}@${asOf}`, async () => {
      const e = this.companies.entryOf(cik);
      const inputs = await this.inputsAsOf(cik, asOf);
      const t0 = performance.now();
      const identity: CompanyIdentity = {
        cik: e.company.cik,
        ticker: e.company.ticker,
        name: e.company.name,
      };
      const data = new CompanyData(identity, inputs);
      this.logger.debug(
        { cik, rows: data.full.length, ms: Math.round(performance.now() - t0) },
        'company built',
      );
      return data;
    });
  }

  clear(): void {
    this.data.clear();
    this.inputs.clear();
    this.bigRows.clear();
  }

  private loadInputs(cik: string): Promise<CompanyInputs> {
    return this.inputs.get(cik, async () => {
      const real = this.companies.realByCik.get(cik);
      if (real === undefined) throw new Error(`no real company ${cik}`);
      // companyfacts parsed while validating at start-up are used once, then left to the cache.
      const pre = this.registry.preparsed.get(cik);
      this.registry.preparsed.delete(cik);
      let companyfacts =
        pre ??
        (real.companyfactsFile
          ? parseCompanyFacts(
              (await readDataFile(real.companyfactsFile)).toString('utf8'),
              real.companyfactsFile.abs,
            )
          : null);
      const restated = this.restatements.get(cik);
      if (companyfacts !== null && restated !== undefined) companyfacts = restate(companyfacts, restated);
      const sources = { cik, submissions: real.submissions, companyfacts, readme: this.registry.readme };
      const docs = await loadFilingDocuments(real.filingFiles, sources);
      const linkbaseLabels = await loadLabelLinkbases(real.filingFiles);
      return { cik, companyfacts, submissions: real.submissions, docs, linkbaseLabels };
    });
  }
}
