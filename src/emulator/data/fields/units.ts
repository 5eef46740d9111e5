/**
 * Unit signatures. Input is a unit name in SEC companyfacts style (`USD`, `shares`, `pure`,
 * `USD/shares`, `Year`); inline XBRL measures are reduced to the same style first.
 * - ISO 4217 code           → `monetary:<CUR>`            class `monetary`, currency CUR
 * - `<CUR>/shares`          → `monetary_per_share:<CUR>`  class `monetary_per_share`, currency CUR
 * - `shares`                → `shares`                    class `shares`
 * - `pure`                  → `pure`                      class `pure`
 * - anything else           → `other:<unit>`              class `other` (e.g. `other:Vendor`)
 */
export interface UnitInfo {
  unit_signature: string;
  unit_class: string;
  currency: string | null;
}

const CURRENCY_RE = /^[A-Z]{3}$/;

export function unitInfo(unit: string): UnitInfo {
  if (CURRENCY_RE.test(unit)) return { unit_signature: `monetary:${unit}`, unit_class: 'monetary', currency: unit };
  const perShare = /^([A-Z]{3})\/shares?$/i.exec(unit);
  if (perShare?.[1] && CURRENCY_RE.test(perShare[1])) {
    return { unit_signature: `monetary_per_share:${perShare[1]}`, unit_class: 'monetary_per_share', currency: perShare[1] };
  }
  const lower = unit.toLowerCase();
  if (lower === 'shares') return { unit_signature: 'shares', unit_class: 'shares', currency: null };
  if (lower === 'pure') return { unit_signature: 'pure', unit_class: 'pure', currency: null };
  return { unit_signature: `other:${unit}`, unit_class: 'other', currency: null };
}

/** Display label of a unit for y axes. */
export function unitLabel(u: UnitInfo): string {
  switch (u.unit_class) {
    case 'monetary':
      return u.currency ?? 'currency';
    case 'monetary_per_share':
      return `${u.currency ?? 'currency'} per share`;
    case 'shares':
      return 'shares';
    case 'pure':
      return 'ratio';
    default:
      return u.unit_signature.replace(/^other:/, '');
  }
}
