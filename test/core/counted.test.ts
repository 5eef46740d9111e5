/**
 * Counted nouns agree with their number (issue 36: "1 companies"): the helper every CLI, status
 * and log line uses, and the same functions inlined into the status page's script.
 */
import { describe, expect, it } from 'vitest';
import { COUNTED_SCRIPT, counted, plural } from '../../src/counted.js';

describe('counted nouns', () => {
  it('say one thing in the singular and every other number in the plural', () => {
    expect(counted(1, 'company', 'companies')).toBe('1 company');
    expect(counted(2, 'company', 'companies')).toBe('2 companies');
    expect(counted(0, 'company', 'companies')).toBe('0 companies');
    expect(counted(1, 'part')).toBe('1 part');
    expect(counted(3, 'part')).toBe('3 parts');
    expect(counted(1234, 'row', 'rows', '1,234')).toBe('1,234 rows');
    expect(counted(1, 'row', 'rows', '1')).toBe('1 row');
    expect(plural(1, 'day')).toBe('day');
    expect(plural(7, 'day')).toBe('days');
  });

  it('say the same on the status page, whose script inlines them', () => {
    const onPage = new Function(
      `${COUNTED_SCRIPT}return [counted(1, 'part'), counted(2, 'part', 'parts', '2'), plural(1, 'day'), counted(1, 'company', 'companies')];`,
    ) as () => string[];
    expect(onPage()).toEqual(['1 part', '2 parts', 'day', '1 company']);
  });
});
