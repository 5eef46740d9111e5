/**
 * One company's served data, built from its parsed sources on first use: facts/full rows at once,
 * everything else (core, latest, evidence, catalogs, series) on first request of it. Built for a
 * given identity (CIK, ticker, name), so a synthetic clone is the same build over the source
 * company's inputs under its own identity.
 */
import type { DimsCatalogRow, EvidenceLocation, EvidenceRow, FactRow, SeriesCatalogRow } from '../../store.js';
import { buildDimsCatalog, buildSeries, compareCatalogRows, type SeriesEntry } from './catalogs.js';
import { normaliseCore } from './core-normalise.js';
import type { FilingDocument } from '../sec/index.js';
import { axisLabelFallback, cleanDimensionLabel, memberLabelFallback } from '../fields/index.js';
import { collectFacts, type CollectedFacts } from './observations.js';
import {
  buildEvidence,
  buildFactRow,
  compareEvidence,
  compareFactRows,
  coreRow,
  newRowMemo,
  type BuiltFact,
  type LabelSources,
} from './rows.js';
import type { CompanyFacts, Submissions } from '../sec/index.js';

export interface CompanyIdentity {
  cik: string;
  ticker: string | null;
  name: string;
}

/** Parsed sources of one real company (shared by its synthetic clones). */
export interface CompanyInputs {
  cik: string;
  companyfacts: CompanyFacts | null;
  submissions: Submissions | null;
  docs: FilingDocument[];
  /** QName → label from bundled label linkbases. */
  linkbaseLabels: Map<string, string>;
}

export interface MetricSlice {
  full: FactRow[];
  core: FactRow[];
  latest: FactRow[];
  evidence: EvidenceRow[];
  seriesCatalog: SeriesCatalogRow[];
  dimsCatalog: DimsCatalogRow[];
}

function durationMs(r: FactRow): number {
  return r.period_start === null ? 0 : Date.parse(r.period_end) - Date.parse(r.period_start);
}

/** Latest row per series: latest period end, then the longest period, then the latest filing. */
export function latestPerSeries(rows: readonly FactRow[]): FactRow[] {
  const best = new Map<string, FactRow>();
  for (const r of rows) {
    const b = best.get(r.series_key);
    if (
      b === undefined ||
      r.period_end > b.period_end ||
      (r.period_end === b.period_end &&
        (durationMs(r) > durationMs(b) || (durationMs(r) === durationMs(b) && r.source_filed_at > b.source_filed_at)))
    ) {
      best.set(r.series_key, r);
    }
  }
  return [...best.values()].sort(compareFactRows);
}

export class CompanyData {
  readonly identity: CompanyIdentity;
  /** facts/full rows, newest period first. */
  readonly full: FactRow[];
  /** Latest filing date in the company's data. */
  readonly asOfDate: string | null;
  private readonly built: BuiltFact[];
  private readonly collected: CollectedFacts;
  private readonly descriptions = new Map<string, string>();
  private readonly linkbase: Map<string, string>;
  private readonly metricCache = new Map<string, MetricSlice>();
  private coreRows?: FactRow[];
  private consolidatedRows?: FactRow[];
  private latestRows?: FactRow[];
  private evidenceRows?: EvidenceRow[];
  private locations?: Map<string, EvidenceLocation>;
  private seriesMap?: Map<string, SeriesEntry>;
  private seriesRows?: SeriesCatalogRow[];
  private dimsRows?: DimsCatalogRow[];

  constructor(identity: CompanyIdentity, inputs: CompanyInputs) {
    this.identity = identity;
    this.linkbase = inputs.linkbaseLabels;
    this.collected = collectFacts(inputs.companyfacts, inputs.submissions, inputs.docs);
    const concepts = new Map<string, string>();
    for (const [id, c] of inputs.companyfacts?.concepts ?? []) {
      if (c.label !== null) concepts.set(id, c.label);
      if (c.description !== null) this.descriptions.set(id, c.description);
    }
    const labels: LabelSources = { concepts, linkbase: inputs.linkbaseLabels };
    const memo = newRowMemo();
    this.built = this.collected.groups.map((group) => ({
      row: buildFactRow(identity.cik, identity.ticker, group, this.collected, labels, memo),
      group,
    }));
    this.built.sort((a, b) => compareFactRows(a.row, b.row));
    this.full = this.built.map((b) => b.row);
    this.asOfDate = this.collected.asOfDate;
    // Only the winners are needed from here on: let the losing reports go.
    for (const g of this.collected.groups) g.candidates = [g.winner];
  }

  /** Label of an axis or member QName. */
  labelOf = (qname: string, kind: 'axis' | 'member'): string =>
    cleanDimensionLabel(this.linkbase.get(qname) ?? (kind === 'axis' ? axisLabelFallback(qname) : memberLabelFallback(qname)));

  private consolidated(): FactRow[] {
    return (this.consolidatedRows ??= this.full.filter((r) => r.is_consolidated).map(coreRow));
  }

  /** facts/core rows (consolidated, with derived Q4 rows), newest period first. */
  get core(): FactRow[] {
    return (this.coreRows ??= normaliseCore(this.consolidated()).sort(compareFactRows));
  }

  get latest(): FactRow[] {
    return (this.latestRows ??= latestPerSeries(this.consolidated()));
  }

  get evidence(): EvidenceRow[] {
    if (this.evidenceRows === undefined) {
      const locations = new Map<string, EvidenceLocation>();
      const rows: EvidenceRow[] = [];
      for (const b of this.built) {
        const e = buildEvidence(b.row, b.group, this.collected);
        rows.push(e.evidence);
        locations.set(e.evidence.evidence_key, e.location);
      }
      this.evidenceRows = rows.sort(compareEvidence);
      this.locations = locations;
    }
    return this.evidenceRows;
  }

  get evidenceLocations(): Map<string, EvidenceLocation> {
    if (this.locations === undefined) void this.evidence;
    return this.locations ?? new Map();
  }

  get series(): Map<string, SeriesEntry> {
    return (this.seriesMap ??= buildSeries(this.full, this.identity, this.descriptions, this.asOfDate));
  }

  get seriesCatalog(): SeriesCatalogRow[] {
    return (this.seriesRows ??= [...this.series.values()].map((s) => s.catalogRow).sort(compareCatalogRows));
  }

  get dimsCatalog(): DimsCatalogRow[] {
    return (this.dimsRows ??= buildDimsCatalog(this.built, this.labelOf));
  }

  /** Rows of one metric (cached). */
  metricSlice(metricId: string): MetricSlice {
    const cached = this.metricCache.get(metricId);
    if (cached !== undefined) return cached;
    const items = this.built.filter((b) => b.row.metric_id === metricId);
    const slice: MetricSlice = {
      full: items.map((x) => x.row),
      core: this.core.filter((r) => r.metric_id === metricId),
      latest: this.latest.filter((r) => r.metric_id === metricId),
      evidence: this.evidence.filter((r) => r.metric_id === metricId),
      seriesCatalog: this.seriesCatalog.filter((r) => r.metric_id === metricId),
      dimsCatalog: buildDimsCatalog(items, this.labelOf),
    };
    this.metricCache.set(metricId, slice);
    return slice;
  }
}

