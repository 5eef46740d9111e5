/**
 * Turns winning fact groups into the interface's rows: fact rows (2.2, with the dimensional fields
 * of facts/full) and evidence rows (2.6), in the field order of the interface.
 */
import type { EvidenceLocation, EvidenceRow, FactRow } from '../../store.js';
import { decimalFields } from '../fields/index.js';
import { edgarDocumentUrl, edgarFilingIndexUrl } from '../sec/index.js';
import {
  evidenceKeyOf,
  evidenceUrlOf,
  filingViewerUrlOf,
  seriesIdentity,
  sha256Hex,
  viewerUrlOf,
} from '../fields/index.js';
import {
  axisLabelFallback,
  cleanDimensionLabel,
  conceptLabelFallback,
  memberLabelFallback,
} from '../fields/index.js';
import type { CollectedFacts, FactGroup } from './observations.js';
import { unitInfo, type UnitInfo } from '../fields/index.js';

export interface LabelSources {
  /** metric_id → label (companyfacts). */
  concepts: Map<string, string>;
  /** QName → label (label linkbases). */
  linkbase: Map<string, string>;
}

/** A fact row with what its evidence and catalogs are derived from. */
export interface BuiltFact {
  row: FactRow;
  group: FactGroup;
}

/** What many rows of one company share, computed once per company build. */
export interface RowMemo {
  /** series identity → series_key. */
  seriesKeys: Map<string, string>;
  /** unit name → unit fields. */
  units: Map<string, UnitInfo>;
  /** metric_id → metric_label. */
  metricLabels: Map<string, string>;
  /** dims_key (with typed-member flags) → dimension_path_label. */
  dimensionLabels: Map<string, string | null>;
}

export function newRowMemo(): RowMemo {
  return { seriesKeys: new Map(), units: new Map(), metricLabels: new Map(), dimensionLabels: new Map() };
}

export function metricLabel(labels: LabelSources, metricId: string, qname: string): string {
  return labels.concepts.get(metricId) ?? labels.linkbase.get(qname) ?? conceptLabelFallback(qname);
}

export function dimensionLabel(labels: LabelSources, g: FactGroup): string | null {
  if (g.dims.length === 0) return null;
  return g.dims
    .map((d) => {
      const axis = cleanDimensionLabel(labels.linkbase.get(d.axis) ?? axisLabelFallback(d.axis));
      const member = d.typed
        ? d.member
        : cleanDimensionLabel(labels.linkbase.get(d.member) ?? memberLabelFallback(d.member));
      return `${axis}: ${member}`;
    })
    .join(' | ');
}

export function quarterOf(date: string): number {
  return Math.ceil(Number.parseInt(date.slice(5, 7), 10) / 3);
}

/** axis_types of every consolidated row: one frozen array, typed mutable as the contract's field (rows are read-only). */
const NO_AXES = Object.freeze([]) as never[] as string[];

/** Builds the facts/full row for one winning group (field order of 2.2, then the dims fields). */
export function buildFactRow(
  cik: string,
  ticker: string | null,
  g: FactGroup,
  collected: CollectedFacts,
  labels: LabelSources,
  memo: RowMemo,
): FactRow {
  const w = g.winner;
  let unit = memo.units.get(g.unit);
  if (unit === undefined) memo.units.set(g.unit, (unit = unitInfo(g.unit)));
  const periodKey = g.periodKey;
  const sIdentity = seriesIdentity(cik, g.metricId, g.dimsKey, unit.unit_signature);
  let seriesKey = memo.seriesKeys.get(sIdentity);
  if (seriesKey === undefined) memo.seriesKeys.set(sIdentity, (seriesKey = sha256Hex(sIdentity)));
  let metricLabelText = memo.metricLabels.get(g.metricId);
  if (metricLabelText === undefined) {
    memo.metricLabels.set(g.metricId, (metricLabelText = metricLabel(labels, g.metricId, g.qname)));
  }
  let dimsLabel: string | null | undefined = null;
  if (g.dimsKey !== null) {
    // A typed member is labelled by its value, an explicit one by its label: the flags are part of the key.
    const labelKey = `${g.dims.map((d) => (d.typed ? 't' : 'e')).join('')}|${g.dimsKey}`;
    dimsLabel = memo.dimensionLabels.get(labelKey);
    if (dimsLabel === undefined) memo.dimensionLabels.set(labelKey, (dimsLabel = dimensionLabel(labels, g)));
  }
  const factIdentity = `${sIdentity}|${periodKey}`;
  const evidenceKey = evidenceKeyOf(cik, `${factIdentity}|${w.accession}`);
  const form = w.form;
  const reportPeriod = collected.reportPeriods.get(w.accession);
  const value = decimalFields(w.value);
  return {
    fact_key: sha256Hex(factIdentity),
    series_key: seriesKey,
    cik,
    current_ticker: ticker,
    metric_id: g.metricId,
    metric_label: metricLabelText,
    period_key: periodKey,
    period_kind: g.periodKind,
    period_start: g.start,
    period_end: g.end,
    period_end_year: Number.parseInt(g.end.slice(0, 4), 10),
    period_end_quarter: quarterOf(g.end),
    unit_signature: unit.unit_signature,
    unit_class: unit.unit_class,
    currency: unit.currency,
    value_num: value.value_num,
    value_scaled_int: value.value_scaled_int,
    scale: value.scale,
    source_accession: w.accession,
    source_form_type: form,
    source_is_amendment: form === null ? null : form.endsWith('/A'),
    source_is_current_filing_period: reportPeriod === undefined ? null : reportPeriod === g.end,
    source_filed_at: w.filed,
    evidence_key: evidenceKey,
    evidence_url: evidenceUrlOf(evidenceKey),
    is_consolidated: g.dims.length === 0,
    dims_key: g.dimsKey,
    axis_types: g.dims.length === 0 ? NO_AXES : g.dims.map((d) => d.axis),
    dimension_path_label: dimsLabel,
    dims_path: g.dimsPath,
  };
}

/** The evidence row (2.6) behind a fact row, and where it points for the viewer. */
export function buildEvidence(
  row: FactRow,
  g: FactGroup,
  collected: CollectedFacts,
): { evidence: EvidenceRow; location: EvidenceLocation } {
  const w = g.winner;
  const cik = row.cik;
  const evidenceKey = row.evidence_key ?? '';
  const doc = w.doc;
  const fact = w.fact;
  const inline = doc !== null && fact !== null && doc.kind === 'ixbrl' && fact.start !== null;
  const primary = collected.primaryDocuments.get(w.accession) ?? null;
  const realAccession = /^\d{10}-\d{2}-\d{6}$/.test(w.accession);
  const documentName = doc?.documentName ?? primary;
  const documentUrl =
    doc !== null
      ? doc.documentUrl
      : realAccession
        ? primary !== null
          ? edgarDocumentUrl(cik, w.accession, primary)
          : edgarFilingIndexUrl(cik, w.accession)
        : null;
  const payload = highlightPayload(row, g, documentName);
  const evidence: EvidenceRow = {
    evidence_key: evidenceKey,
    cik,
    source_accession: w.accession,
    source_form_type: row.source_form_type,
    source_is_amendment: row.source_is_amendment,
    source_filed_at: w.filed,
    filing_url: inline ? filingViewerUrlOf(doc.path) : null,
    document_url: documentUrl,
    evidence_url: row.evidence_url,
    viewer_url: inline ? viewerUrlOf(evidenceKey) : null,
    snippet_text: fact?.snippet ?? null,
    locator_type: inline ? 'ixbrl' : 'xbrl',
    html_start_offset: inline ? fact.start : null,
    html_end_offset: inline ? fact.end : null,
    document_name: documentName,
    document_sequence: null,
    section_title: fact?.section ?? null,
    highlight_payload_json: payload,
    fact_key: row.fact_key,
    series_key: row.series_key,
    metric_id: row.metric_id,
    period_key: row.period_key,
    dims_key: g.dimsKey,
    unit_signature: row.unit_signature,
    value_num: row.value_num,
  };
  const location: EvidenceLocation = {
    evidence,
    documentPath: inline ? doc.path : null,
    start: inline ? fact.start : null,
    end: inline ? fact.end : null,
  };
  return { evidence, location };
}

/** highlight_payload_json: where the figure is in its document (ixbrl, instance) or in companyfacts. */
function highlightPayload(
  row: FactRow,
  g: FactGroup,
  documentName: string | null,
): Record<string, unknown> {
  const w = g.winner;
  const doc = w.doc;
  const fact = w.fact;
  const inline = doc !== null && fact !== null && doc.kind === 'ixbrl' && fact.start !== null;
  return inline
    ? {
        locator_type: 'ixbrl',
        document_name: documentName,
        html_start_offset: fact.start,
        html_end_offset: fact.end,
        table_fingerprint: fact.table?.fingerprint ?? null,
        table_index: fact.table?.index ?? null,
        row_index: fact.table?.row ?? null,
        column_index: fact.table?.column ?? null,
        ix_node_id: fact.nodeId,
        context_ref: fact.contextRef,
        unit_ref: fact.unitRef,
        displayed_text: fact.displayed,
        scale: fact.scaleAttr,
        sign: fact.signNegative ? '-' : null,
        format: fact.format,
        hidden: fact.hidden,
      }
    : doc !== null && fact !== null
      ? {
          locator_type: 'xbrl',
          source: 'xbrl_instance',
          document_name: documentName,
          xml_start_offset: fact.start,
          xml_end_offset: fact.end,
          xbrl_node_id: fact.nodeId,
          context_ref: fact.contextRef,
          unit_ref: fact.unitRef,
        }
      : {
          locator_type: 'xbrl',
          source: 'companyfacts',
          accession: w.accession,
          concept: g.qname,
          unit: g.unit,
          period_key: row.period_key,
          fy: w.cf?.fy ?? null,
          fp: w.cf?.fp ?? null,
          frame: w.cf?.frame ?? null,
        };
}

/** Core/latest rows: the 2.2 fields without the facts/full dimensional fields. */
export function coreRow(full: FactRow): FactRow {
  const { dims_key: _d, axis_types: _a, dimension_path_label: _l, dims_path: _p, ...rest } = full;
  return rest as FactRow;
}

/** Newest period first; then shorter periods first, then metric, slice and unit for a stable order. */
export function compareFactRows(a: FactRow, b: FactRow): number {
  if (a.period_end !== b.period_end) return a.period_end < b.period_end ? 1 : -1;
  const as = a.period_start ?? '9999';
  const bs = b.period_start ?? '9999';
  if (as !== bs) return as < bs ? 1 : -1;
  if (a.metric_id !== b.metric_id) return a.metric_id < b.metric_id ? -1 : 1;
  const ad = a.dims_key ?? '';
  const bd = b.dims_key ?? '';
  if (ad !== bd) return ad < bd ? -1 : 1;
  return a.unit_signature < b.unit_signature ? -1 : a.unit_signature > b.unit_signature ? 1 : 0;
}

/** Newest filing first; within a filing, document order, then metric and period. */
export function compareEvidence(a: EvidenceRow, b: EvidenceRow): number {
  if (a.source_filed_at !== b.source_filed_at) return a.source_filed_at < b.source_filed_at ? 1 : -1;
  if (a.source_accession !== b.source_accession) return a.source_accession < b.source_accession ? 1 : -1;
  const ao = a.html_start_offset ?? Number.MAX_SAFE_INTEGER;
  const bo = b.html_start_offset ?? Number.MAX_SAFE_INTEGER;
  if (ao !== bo) return ao - bo;
  return a.evidence_key < b.evidence_key ? -1 : a.evidence_key > b.evidence_key ? 1 : 0;
}
