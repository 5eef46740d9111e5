/**
 * Stable public keys. Identities are plain strings joined with `|`; keys are their sha256 hex.
 * - series identity: `cik|metric_id|dims_key|unit_signature` (dims_key '' for consolidated)
 * - fact identity:   `<series identity>|period_key`
 * - evidence identity: `<fact identity>|source_accession`
 * evidence_key and series_id carry the CIK (`ev_<cik>_<hex>`, `s_<cik>_<hex>`) so a lookup by key
 * loads just that company; both are what the URL paths (store.ts) and the lookups take.
 */
import { hash } from 'node:crypto';

/** sha256 hex of a string (UTF-8). One-shot `crypto.hash`: no Hash object per key (2 per fact row). */
export function sha256Hex(s: string): string {
  return hash('sha256', s, 'hex');
}

export function seriesIdentity(cik: string, metricId: string, dimsKey: string | null, unitSignature: string): string {
  return `${cik}|${metricId}|${dimsKey ?? ''}|${unitSignature}`;
}

/** `s_<cik>_<first 16 hex of series_key>`. */
export function seriesIdOf(cik: string, seriesKey: string): string {
  return `s_${cik}_${seriesKey.slice(0, 16)}`;
}

/** evidence_key: `ev_<cik>_<first 40 hex of sha256(evidence identity)>`. */
export function evidenceKeyOf(cik: string, evidenceIdentity: string): string {
  return `ev_${cik}_${sha256Hex(evidenceIdentity).slice(0, 40)}`;
}

/** The CIK embedded in a series or evidence id, or undefined. */
export function cikOfId(id: string): string | undefined {
  const m = /^(?:s|ev)_(\d{10})_[0-9a-f]+$/.exec(id);
  return m?.[1];
}

// URL paths agreed with the HTTP layer (store.ts, src/emulator/server/routes/viewer.ts).
export const evidenceUrlOf = (evidenceKey: string): string => `/api/evidence/${evidenceKey}/open`;
export const viewerUrlOf = (evidenceKey: string): string => `/viewer/evidence/${evidenceKey}`;
export const filingViewerUrlOf = (documentPath: string): string =>
  `/viewer/document/${documentPath.split('/').map(encodeURIComponent).join('/')}`;
export const blobUrlOf = (seriesId: string, version: number): string => `/s/series/${seriesId}/${version}`;
