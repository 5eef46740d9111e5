/**
 * Inline XBRL transformation formats (ixt / ixt-sec) for numbers: displayed text → exact decimal.
 * Formats seen in SEC filings: num-dot-decimal (1,234.5), num-comma-decimal (1.234,5), fixed-zero /
 * zerodash (— means 0), numwordsen (two, none). Unknown formats are not guessed: undefined.
 */
import { parseDecimal, type Decimal } from '../fields/index.js';

const WORDS: Record<string, number> = {
  no: 0,
  none: 0,
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
};

function wordsToDecimal(text: string): Decimal | undefined {
  const parts = text.toLowerCase().replace(/-/g, ' ').split(/[\s\u00a0]+/).filter((w) => w !== '' && w !== 'and');
  if (parts.length === 0) return undefined;
  let total = 0n;
  let current = 0n;
  for (const w of parts) {
    const n = WORDS[w];
    if (n !== undefined) current += BigInt(n);
    else if (w === 'hundred') current *= 100n;
    else if (w === 'thousand' || w === 'million' || w === 'billion') {
      const mult = w === 'thousand' ? 1000n : w === 'million' ? 1_000_000n : 1_000_000_000n;
      total += (current === 0n ? 1n : current) * mult;
      current = 0n;
    } else return undefined;
  }
  return parseDecimal((total + current).toString());
}

/** Local name of a format QName (`ixt:num-dot-decimal` → `num-dot-decimal`). */
function formatName(format: string | null): string {
  return (format ?? '').replace(/^[\w-]+:/, '').toLowerCase();
}

/** The displayed text as a decimal, before scale and sign. */
export function parseDisplayedNumber(text: string, format: string | null): Decimal | undefined {
  const t = text.replace(/[\s\u00a0]+/g, ' ').trim();
  const f = formatName(format);
  switch (f) {
    case 'fixed-zero':
    case 'zerodash':
    case 'numdash':
    case 'fixed-empty':
      return parseDecimal('0');
    case 'numwordsen':
    case 'num-word-en':
      return wordsToDecimal(t);
    case 'num-comma-decimal':
    case 'numcommadecimal':
    case 'numdotcomma':
      return parseDecimal(t.replace(/[ .\u00a0']/g, '').replace(',', '.'));
    case '':
    case 'num-dot-decimal':
    case 'numdotdecimal':
    case 'numcommadot':
    case 'num-dot-decimal-apos':
      if (/^[-\u2013\u2014]+$/.test(t)) return parseDecimal('0');
      return parseDecimal(t.replace(/[ ,'\u00a0]/g, ''));
    default:
      return parseDecimal(t.replace(/[ ,\u00a0]/g, ''));
  }
}
