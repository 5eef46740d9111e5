/** The per-part reuse rule, without Redis or files: what is carried over and what is fetched, and why. */
import { describe, expect, it } from 'vitest';
import type { Manifest, ManifestPart } from '../../src/output/catalog/manifest.js';
import { CatalogFingerprint } from '../../src/pipeline/part/catalog-fingerprint.js';
import { decideReuse } from '../../src/pipeline/part/reuse-decision.js';
import type { PartPointer } from '../../src/types.js';

const FP = 'fp1:aaa';
const previous = (parts: ManifestPart[]): Manifest =>
  ({ snapshot_id: 'night-1', parts }) as unknown as Manifest;
const catalog = (o: Partial<PartPointer> = {}): PartPointer => ({
  dataset: 'series_catalog',
  ticker: 'MSFT',
  status: 'done',
  rows: 10,
  bytes: 100,
  fingerprint: FP,
  ...o,
});
const prevCatalog: ManifestPart = {
  dataset: 'series_catalog',
  ticker: 'MSFT',
  status: 'done',
  rows: 10,
  fingerprint: FP,
};
const prevFacts = (o: Partial<ManifestPart> = {}): ManifestPart => ({
  dataset: 'facts_full',
  ticker: 'MSFT',
  status: 'done',
  rows: 5,
  archive: '_snapshots/night-1/parts/facts_full/MSFT.ndjson.gz',
  bytes: 50,
  sha256: 'f'.repeat(64),
  ...o,
});

describe('decideReuse', () => {
  it('carries over only an unchanged company whose previous part was done', () => {
    expect(decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog, prevFacts()]))).toEqual({
      kind: 'reuse',
      previous: prevFacts(),
    });
    expect(decideReuse('facts_full', 'MSFT', undefined, previous([prevCatalog, prevFacts()]))).toEqual({
      kind: 'wait',
    });
  });

  it('fetches when the catalog changed, failed or has no fingerprint', () => {
    const p = previous([prevCatalog, prevFacts()]);
    expect(decideReuse('facts_full', 'MSFT', catalog({ fingerprint: 'fp1:bbb' }), p)).toMatchObject({
      kind: 'fetch',
      reason: 'changed since the previous snapshot',
    });
    expect(decideReuse('facts_full', 'MSFT', catalog({ status: 'failed' }), p)).toMatchObject({
      kind: 'fetch',
    });
    const { fingerprint: _f, ...bare } = catalog();
    expect(decideReuse('facts_full', 'MSFT', bare, p)).toMatchObject({ kind: 'fetch' });
  });

  it('fetches a company whose previous part failed, was not found, or kept no archive', () => {
    for (const status of ['failed', 'not_found', 'bad_request'] as const)
      expect(
        decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog, prevFacts({ status, rows: 0 })])),
      ).toMatchObject({
        kind: 'fetch',
        reason: `its facts_full part in night-1 was ${status}`,
      });
    const { archive: _a, ...noArchive } = prevFacts();
    expect(decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog, noArchive]))).toMatchObject({
      kind: 'fetch',
    });
    expect(decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog]))).toMatchObject({
      kind: 'fetch',
    });
  });
});

describe('CatalogFingerprint', () => {
  const row = (key: string, version: number, count = 3) => ({
    series_key: key,
    series_version: version,
    observation_count: count,
    latest_filed_at: '2025-10-31',
    filing_count: 2,
    metric_label: 'ignored',
  });
  const digest = (rows: Record<string, unknown>[]): string | null => {
    const f = new CatalogFingerprint();
    for (const r of rows) f.add(r);
    return f.digest();
  };

  it('ignores row order and other fields, and moves with a version, a count or a new series', () => {
    const base = digest([row('a', 1), row('b', 1)]);
    expect(digest([row('b', 1), { ...row('a', 1), metric_label: 'renamed' }])).toBe(base);
    expect(digest([row('a', 2), row('b', 1)])).not.toBe(base); // a restatement: new version
    expect(digest([row('a', 1, 4), row('b', 1)])).not.toBe(base); // a new observation
    expect(digest([row('a', 1), row('b', 1), row('c', 1)])).not.toBe(base); // a new series
    expect(base).toMatch(/^fp1:[0-9a-f]{64}$/);
  });

  it('is unavailable when a row has no series version', () => {
    expect(digest([row('a', 1), { series_key: 'b' }])).toBeNull();
  });
});
