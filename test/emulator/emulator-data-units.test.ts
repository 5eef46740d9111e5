/**
 * Pure pieces of the emulator data layer: exact decimals, inline XBRL number formats, unit
 * signatures, JSON number preservation and the README catalog of accessions.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addDecimal,
  decimalFields,
  defaultDataDir,
  formatDecimal,
  parseDecimal,
  parseJsonQuotingKeys,
  parseReadmeCatalog,
  subtractDecimal,
  unitInfo,
} from '../../src/emulator/data/index.js';
import { parseDisplayedNumber } from '../../src/emulator/data/sec/ixbrl-values.js';

const dec = (s: string) => {
  const d = parseDecimal(s);
  if (d === undefined) throw new Error(`not a decimal: ${s}`);
  return d;
};

describe('decimal', () => {
  it('normalises trailing zeros into the scale and formats without exponent', () => {
    expect(decimalFields(dec('391035000000'))).toEqual({
      value_num: '391035000000',
      value_scaled_int: '391035',
      scale: 6,
    });
    expect(decimalFields(dec('6.11'))).toEqual({ value_num: '6.11', value_scaled_int: '611', scale: -2 });
    expect(decimalFields(dec('-0.00001'))).toEqual({
      value_num: '-0.00001',
      value_scaled_int: '-1',
      scale: -5,
    });
    expect(decimalFields(dec('0.000'))).toEqual({ value_num: '0', value_scaled_int: '0', scale: 0 });
    expect(decimalFields(dec('1.5E3'))).toEqual({ value_num: '1500', value_scaled_int: '15', scale: 2 });
    expect(formatDecimal(dec('-12.50'))).toBe('-12.5');
    expect(parseDecimal('1,000')).toBeUndefined();
    expect(parseDecimal('')).toBeUndefined();
  });

  it('reads plain numbers (the fast path) exactly as the general form with an exponent', () => {
    const plain = ['0', '-0', '007', '0.5', '-0.05', '10', '100.00', '1.010', '120', '-100', '0.000100'];
    for (const text of [...plain, '9007199254740993.100', '391035000000', '-12.50']) {
      expect(dec(text)).toEqual(dec(`${text}e0`));
    }
    expect(decimalFields(dec('100.00'))).toEqual({ value_num: '100', value_scaled_int: '1', scale: 2 });
    expect(decimalFields(dec('1.010'))).toEqual({ value_num: '1.01', value_scaled_int: '101', scale: -2 });
    for (const text of ['-', '.', '1.2.3', '--1']) expect(parseDecimal(text)).toBeUndefined();
    expect(decimalFields(dec('.5'))).toEqual({ value_num: '0.5', value_scaled_int: '5', scale: -1 });
    expect(decimalFields(dec('5.'))).toEqual({ value_num: '5', value_scaled_int: '5', scale: 0 });
  });

  it('is exact beyond 2^53', () => {
    const big = '123456789012345678901234567890.000000000000000001';
    expect(formatDecimal(dec(big))).toBe(big);
    expect(formatDecimal(addDecimal(dec('9007199254740993'), dec('0.1')))).toBe('9007199254740993.1');
    expect(formatDecimal(subtractDecimal(dec('391035000000'), dec('296105000000')))).toBe('94930000000');
  });
});

describe('inline XBRL number formats', () => {
  it('reads the formats SEC filings use', () => {
    const f = (text: string, format: string | null) => {
      const d = parseDisplayedNumber(text, format);
      return d === undefined ? undefined : formatDecimal(d);
    };
    expect(f('391,035', 'ixt:num-dot-decimal')).toBe('391035');
    expect(f('1.234,5', 'ixt:num-comma-decimal')).toBe('1234.5');
    expect(f('—', 'ixt:fixed-zero')).toBe('0');
    expect(f('two', 'ixt-sec:numwordsen')).toBe('2');
    expect(f('no', 'ixt-sec:numwordsen')).toBe('0');
    expect(f('twenty-one', 'ixt-sec:numwordsen')).toBe('21');
    expect(f('0.00001', null)).toBe('0.00001');
    expect(f('n/a', 'ixt:num-dot-decimal')).toBeUndefined();
  });
});

describe('units', () => {
  it('maps SEC unit names to signatures', () => {
    expect(unitInfo('USD')).toEqual({
      unit_signature: 'monetary:USD',
      unit_class: 'monetary',
      currency: 'USD',
    });
    expect(unitInfo('EUR/shares')).toEqual({
      unit_signature: 'monetary_per_share:EUR',
      unit_class: 'monetary_per_share',
      currency: 'EUR',
    });
    expect(unitInfo('shares')).toEqual({ unit_signature: 'shares', unit_class: 'shares', currency: null });
    expect(unitInfo('pure')).toEqual({ unit_signature: 'pure', unit_class: 'pure', currency: null });
    expect(unitInfo('Vendor')).toEqual({
      unit_signature: 'other:Vendor',
      unit_class: 'other',
      currency: null,
    });
  });
});

describe('JSON', () => {
  it('keeps the named numbers as their source text, also inside strings it leaves alone', () => {
    const doc = parseJsonQuotingKeys(
      '{"val": 12345678901234567890, "fy":2024, "s":"\\"val\\":1", "x":[{"val":-6.10}]}',
      'f.json',
      ['val'],
    ) as Record<string, unknown>;
    expect(doc).toEqual({ val: '12345678901234567890', fy: 2024, s: '"val":1', x: [{ val: '-6.10' }] });
  });

  it('names the file and the position in it when the JSON is broken', () => {
    expect(() => parseJsonQuotingKeys('{"val":1,', 'companyfacts/CIK1.json', ['val'])).toThrow(
      /companyfacts\/CIK1\.json is not valid JSON/,
    );
  });
});

describe('README catalog', () => {
  it('reads accession numbers and EDGAR names of the bundled documents from SOURCE.md', () => {
    const cat = parseReadmeCatalog(readFileSync(join(defaultDataDir(), 'SOURCE.md'), 'utf8'));
    expect(cat.get('filings/AAPL/aapl-10-k-2024-11-01.html')).toEqual({
      accession: '0000320193-24-000123',
      secName: 'aapl-20240928.htm',
    });
    expect(cat.get('filings/MSFT/msft-20150630.xml')?.accession).toBe('0001193125-15-272806');
    expect(cat.get('filings/META/meta-10-k-2025-01-30.html')).toEqual({ accession: null, secName: null });
  });
});
