/**
 * Every company a store serves, by CIK and by ticker: the real companies of the registry, then the
 * `--synthetic` clones and SYNBIG, planned here (their rows are rewritten on access, clone.ts).
 */
import { EmulatorDataError } from '../../errors.js';
import type { Company } from '../../store.js';
import { CloneRewriter } from './clone.js';
import type { RealCompany, Registry } from './company-registry.js';
import { planSynthetic } from './synthetic.js';

/** A served company and where its rows come from. */
export interface CompanyEntry {
  company: Company;
  /** The real company whose data is built: itself, or a clone's source. */
  sourceCik: string;
  /** Synthetic clones: rewrites the source's rows to the clone's identity. */
  rewriter?: CloneRewriter;
  /** SYNBIG's row count. */
  largeRows?: number;
}

export interface CompanyIndexOptions {
  /** Number of synthetic clones of the real companies. */
  synthetic: number;
  /** When > 0, adds SYNBIG whose facts/full has exactly this many rows. */
  syntheticLargeRows: number;
}

export class CompanyIndex {
  /** Every company: real ones first, then synthetic ones, in the order they were added. */
  readonly ordered: Company[] = [];
  readonly realByCik: ReadonlyMap<string, RealCompany>;
  /** How many `--synthetic` clones were planned (SYNBIG aside). */
  readonly syntheticCount: number;
  private readonly entries = new Map<string, CompanyEntry>();
  private readonly byTicker = new Map<string, CompanyEntry>();

  constructor(registry: Registry, opts: CompanyIndexOptions) {
    this.realByCik = new Map(registry.companies.map((c) => [c.cik, c]));
    for (const c of registry.companies) {
      this.add({
        company: { cik: c.cik, ticker: c.ticker, tickers: c.tickers, name: c.name, synthetic: false },
        sourceCik: c.cik,
      });
    }
    // Clones never take a CIK or ticker of the tickers map or of the data.
    const takenCiks = new Set([...registry.tickersMap.map((t) => t.cik), ...this.realByCik.keys()]);
    const takenTickers = new Set([...registry.tickersMap.map((t) => t.ticker), ...this.byTicker.keys()]);
    const { count, nextCik } = this.addClones(registry, opts.synthetic, takenCiks, takenTickers);
    this.syntheticCount = count;
    this.addSynbig(registry, opts.syntheticLargeRows, takenCiks, takenTickers, nextCik);
  }

  get(cik: string): CompanyEntry | undefined {
    return this.entries.get(cik);
  }

  /** The entry of a known CIK, or an EmulatorDataError naming it. */
  entryOf(cik: string): CompanyEntry {
    const e = this.entries.get(cik);
    if (e === undefined) throw new EmulatorDataError(`unknown company CIK ${cik}`);
    return e;
  }

  /** A ticker (any case) or a CIK (with or without zero padding); undefined if unknown. */
  resolve(scope: { ticker?: string; cik?: string }): Company | undefined {
    if (scope.ticker !== undefined) return this.byTicker.get(scope.ticker.trim().toUpperCase())?.company;
    if (scope.cik !== undefined) {
      const c = scope.cik.trim();
      if (!/^\d{1,10}$/.test(c)) return undefined;
      return this.entries.get(c.padStart(10, '0'))?.company;
    }
    return undefined;
  }

  private add(e: CompanyEntry): void {
    this.entries.set(e.company.cik, e);
    this.ordered.push(e.company);
    for (const t of e.company.tickers) if (!this.byTicker.has(t)) this.byTicker.set(t, e);
  }

  private rewriter(cik: string, ticker: string, name: string, sourceCik: string): CloneRewriter {
    const sourceName = this.realByCik.get(sourceCik)?.name ?? '';
    return new CloneRewriter({ cik, ticker, name, sourceCik, sourceName });
  }

  /** `--synthetic N`: clones round robin over the companies with facts (all of them when none has). */
  private addClones(
    registry: Registry,
    requested: number,
    takenCiks: ReadonlySet<string>,
    takenTickers: ReadonlySet<string>,
  ): { count: number; nextCik: number } {
    const withFacts = registry.companies.filter((c) => c.dataBytes > 0);
    const sources = withFacts.length > 0 ? withFacts : registry.companies;
    const count = Math.max(0, Math.floor(requested));
    const { plans, nextCik } = planSynthetic(count, sources, takenCiks, takenTickers);
    for (const p of plans) {
      this.add({
        company: { cik: p.cik, ticker: p.ticker, tickers: [p.ticker], name: p.name, synthetic: true },
        sourceCik: p.sourceCik,
        rewriter: this.rewriter(p.cik, p.ticker, p.name, p.sourceCik),
      });
    }
    return { count: plans.length, nextCik };
  }

  /** SYNBIG: a clone of the largest company (data on disk) whose facts/full is generated. */
  private addSynbig(
    registry: Registry,
    requestedRows: number,
    takenCiks: ReadonlySet<string>,
    takenTickers: ReadonlySet<string>,
    nextCik: number,
  ): void {
    const largeRows = Math.max(0, Math.floor(requestedRows));
    if (largeRows <= 0) return;
    const largest = [...registry.companies].sort((a, b) => b.dataBytes - a.dataBytes)[0];
    if (largest === undefined || takenTickers.has('SYNBIG')) return;
    const ciks = new Set([...takenCiks, ...this.entries.keys()]);
    const big = planSynthetic(1, [largest], ciks, takenTickers, nextCik).plans[0];
    if (big === undefined) return;
    const name = `Synthetic Big Issuer (synthetic clone of ${largest.name}, ${largeRows} generated fact rows)`;
    this.add({
      company: { cik: big.cik, ticker: 'SYNBIG', tickers: ['SYNBIG'], name, synthetic: true },
      sourceCik: largest.cik,
      rewriter: this.rewriter(big.cik, 'SYNBIG', name, largest.cik),
      largeRows,
    });
  }
}
