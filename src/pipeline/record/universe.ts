/**
 * The universe: which companies a snapshot exports. Tickers and/or CIKs from the config, a file
 * (one per line, or CSV with a `ticker` or `cik` column) or flags; normalised, validated, and
 * de-duplicated in first-seen order.
 */
import { readFile } from 'node:fs/promises';
import { InputError, coerceError } from '../../errors.js';
import { CIK_PATTERN, TICKER_PATTERN } from '../../contract/vocabulary.js';

/**
 * One company of the universe, identified the way the user named it. `typed`: the text as the
 * user typed it (`aapl`, `CIK0000320193`, `320193`), kept only when it differs from the key, so
 * that messages name a missing company the way the user will look for it.
 */
export type Company =
  { kind: 'ticker'; ticker: string; typed?: string } | { kind: 'cik'; cik: string; typed?: string };

/** The company's key in job ids, file names and status: the ticker, or the 10-digit CIK. */
export function companyKey(c: Company): string {
  return c.kind === 'ticker' ? c.ticker : c.cik;
}

/** The company as the user typed it, for messages (`aapl`, `CIK0000320193`); else its key. */
export function companyAsTyped(c: Company): string {
  return c.typed ?? companyKey(c);
}

/** `c` remembering `raw` as typed, when that differs from its key. */
function typedAs(c: Company, raw: string | number): Company {
  const typed = String(raw).trim();
  return typed === companyKey(c) ? c : { ...c, typed };
}

/** Request scope of the API (section 2.1): `{ ticker }` or `{ cik }`. */
export function companyScope(c: Company): { ticker: string } | { cik: string } {
  return c.kind === 'ticker' ? { ticker: c.ticker } : { cik: c.cik };
}

/**
 * Parses one ticker; `where` names the place for the error. The raw text is checked against ASCII
 * before any case mapping: `'ſ'.toUpperCase()` is `'S'` (also `ı`→`I`, `ß`→`SS`), so `TſLA` would
 * otherwise export Tesla's rows under TSLA.
 */
export function parseTicker(raw: string, where: string): Company {
  const foreign = /[^\x20-\x7e]/u.exec(raw);
  if (foreign)
    throw new InputError(
      `${where}: ${JSON.stringify(raw)} is not a ticker: it contains ${describeChar(foreign[0])} at position ${foreign.index + 1} (tickers are ASCII letters, digits, "." or "-")`,
    );
  const t = raw.trim().toUpperCase();
  if (!TICKER_PATTERN.test(t))
    throw new InputError(
      `${where}: ${JSON.stringify(raw)} is not a ticker (1-20 ASCII letters, digits, "." or "-")`,
    );
  return typedAs({ kind: 'ticker', ticker: t }, raw);
}

/** The SEC's own spelling of a CIK, `CIK0000320193`: the prefix is ours to drop (the API takes digits). */
const CIK_PREFIX = /^CIK\s*/i;

/**
 * Parses one CIK into its 10-digit form: with or without zero padding, and with or without the
 * SEC's `CIK` prefix (`320193`, `0000320193`, `CIK0000320193` are one company).
 */
export function parseCik(raw: string | number, where: string): Company {
  const s = String(raw).trim().replace(CIK_PREFIX, '');
  if (!CIK_PATTERN.test(s) || /^0+$/.test(s))
    throw new InputError(
      `${where}: ${JSON.stringify(raw)} is not a CIK (1 to 10 digits, not all zeros, optionally after "CIK")`,
    );
  return typedAs({ kind: 'cik', cik: s.padStart(10, '0') }, raw);
}

/** A character for an error message: itself and its code point, e.g. `"ſ" (U+017F)`. */
function describeChar(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return `${JSON.stringify(ch)} (U+${cp.toString(16).toUpperCase().padStart(4, '0')})`;
}

/** A value that may be either: digits (after an optional `CIK`) mean a CIK, anything else a ticker. */
export function parseCompany(raw: string, where: string): Company {
  return /^\s*(CIK\s*)?\d+\s*$/i.test(raw) ? parseCik(raw, where) : parseTicker(raw, where);
}

/**
 * Reads a universe file. Formats: one ticker or CIK per line (`#` starts a comment); or CSV whose
 * header names a `ticker` and/or `cik` column (a row uses its ticker when it has one). Errors name
 * the file and line.
 */
export async function readUniverseFile(path: string): Promise<Company[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err: unknown) {
    const e = coerceError(err) as NodeJS.ErrnoException;
    throw new InputError(`universe file ${path}: ${e.code === 'ENOENT' ? 'file not found' : e.message}`);
  }
  return parseUniverseText(text, path);
}

export function parseUniverseText(text: string, path: string): Company[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const out: Company[] = [];
  let header: { ticker: number; cik: number } | undefined;
  let first = true;
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').replace(/#.*$/, '').trim();
    if (line === '') continue;
    const where = `universe file ${path}, line ${i + 1}`;
    const cells = splitCsvLine(line).map((c) => c.trim());
    if (first) {
      first = false;
      const lower = cells.map((c) => c.toLowerCase());
      if (lower.includes('ticker') || lower.includes('cik')) {
        header = { ticker: lower.indexOf('ticker'), cik: lower.indexOf('cik') };
        continue;
      }
      if (cells.length > 1)
        throw new InputError(
          `${where}: a CSV universe file needs a header row naming a "ticker" or "cik" column (got ${JSON.stringify(line)})`,
        );
    }
    if (header) {
      const ticker = header.ticker >= 0 ? (cells[header.ticker] ?? '') : '';
      const cik = header.cik >= 0 ? (cells[header.cik] ?? '') : '';
      if (ticker !== '') out.push(parseTicker(ticker, `${where}, column ticker`));
      else if (cik !== '') out.push(parseCik(cik, `${where}, column cik`));
      else throw new InputError(`${where}: the row has neither a ticker nor a cik`);
    } else {
      if (cells.length > 1)
        throw new InputError(`${where}: expected one ticker or CIK per line (got ${JSON.stringify(line)})`);
      out.push(parseCompany(cells[0] ?? '', where));
    }
  }
  return out;
}

/** Minimal CSV: commas, double-quoted cells with "" escapes. */
function splitCsvLine(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      cells.push(cell);
      cell = '';
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}

export interface UniverseSources {
  /** config.universe.tickers */
  tickers?: readonly string[];
  /** config.universe.ciks */
  ciks?: readonly string[];
  /** config.universe.file (absolute) */
  file?: string | null;
  /** Label of where `tickers` came from, for errors. @defaultValue `config.universe.tickers` */
  tickersLabel?: string;
}

/** Builds the universe from all sources, de-duplicated. Throws when it ends up empty. */
export async function loadUniverse(src: UniverseSources): Promise<Company[]> {
  const all: Company[] = [];
  const label = src.tickersLabel ?? 'config.universe.tickers';
  // `--tickers` and universe.tickers take CIKs too (`0000320193`, `320193`), as the help says.
  (src.tickers ?? []).forEach((t, i) => all.push(parseCompany(t, `${label}[${i}]`)));
  (src.ciks ?? []).forEach((c, i) => all.push(parseCik(c, `config.universe.ciks[${i}]`)));
  if (src.file) all.push(...(await readUniverseFile(src.file)));
  const universe = dedupe(all);
  if (universe.length === 0)
    throw new InputError(
      'the universe is empty: name companies with --tickers, config universe.tickers / universe.ciks, or universe.file',
    );
  return universe;
}

export function dedupe(companies: readonly Company[]): Company[] {
  const seen = new Set<string>();
  const out: Company[] = [];
  for (const c of companies) {
    const k = `${c.kind}:${companyKey(c)}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(c);
  }
  return out;
}
