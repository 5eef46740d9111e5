/**
 * The fingerprint of a company's series catalog: sha256 over one line per series,
 * `series_key|series_version|observation_count|latest_filed_at|filing_count`, sorted. Why these:
 * a new filing adds observations and moves latest_filed_at and filing_count; an amendment or a
 * restatement changes a value of an existing point, which changes the series' version (a hash of
 * its points) even when no count moves; a new series adds a line. Row order does not matter.
 */
import { createHash } from 'node:crypto';

const FIELDS = [
  'series_key',
  'series_version',
  'observation_count',
  'latest_filed_at',
  'filing_count',
] as const;
/** Without these a row says nothing about change: the fingerprint is unavailable. */
const NEEDED = ['series_key', 'series_version'] as const;

export class CatalogFingerprint {
  private readonly lines: string[] = [];
  private usable = true;

  add(row: Record<string, unknown>): void {
    if (!this.usable) return;
    if (NEEDED.some((f) => row[f] === undefined || row[f] === null)) {
      this.usable = false;
      return;
    }
    this.lines.push(
      FIELDS.map((f) => (row[f] === undefined || row[f] === null ? '' : String(row[f]))).join('|'),
    );
  }

  /** `fp1:<sha256 hex>`, or null when a row lacked a series key or version. */
  digest(): string | null {
    if (!this.usable) return null;
    const h = createHash('sha256');
    for (const line of [...this.lines].sort()) h.update(`${line}\n`);
    return `fp1:${h.digest('hex')}`;
  }
}
