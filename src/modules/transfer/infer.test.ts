import { describe, expect, it } from 'vitest';
import { ColumnStats, dateText, headerNames, looksLikeFormula } from './infer.js';
import { cellValue, safeText } from './cell-text.js';

const planOf = (values: Array<string | null>) => {
  const stats = new ColumnStats();
  values.forEach((v) => stats.observe(v));
  return stats.plan('C');
};

describe('import type inference', () => {
  it('reads the common date formats and refuses impossible dates', () => {
    expect(dateText('2026-11-27')).toBe('2026-11-27');
    expect(dateText('2026-11-27T08:05:00Z')).toBe('2026-11-27 08:05');
    expect(dateText('27.11.2026')).toBe('2026-11-27');
    expect(dateText('11/27/2026 8:05')).toBe('2026-11-27 08:05');
    expect(dateText('2026/1/2')).toBe('2026-01-02');
    expect(dateText('2026-02-30')).toBeNull();
    expect(dateText('27/11/2026')).toBeNull(); // month 27
  });

  it('infers number, checkbox, date, single select and text', () => {
    expect(planOf(['1', '-2.5', '', '3e2'])).toEqual({ name: 'C', type: 'number' });
    expect(planOf(['yes', 'no', 'TRUE'])).toEqual({ name: 'C', type: 'checkbox' });
    expect(planOf(['2026-01-01', '2026-01-02 10:00'])).toEqual({ name: 'C', type: 'date', data: { format: 'YYYY-MM-DD HH:mm' } });
    expect(planOf(['a', 'b', 'a', 'b', 'a', 'b'])).toEqual({ name: 'C', type: 'single-select' });
    expect(planOf(['a', 'b', 'c'])).toEqual({ name: 'C', type: 'text' });
    expect(planOf([null, ''])).toEqual({ name: 'C', type: 'text' });
  });

  it('names repeated and empty header cells, and spots formulas', () => {
    expect(headerNames(['A', 'A', ''])).toEqual(['A', 'A (2)', 'Column 3']);
    expect(looksLikeFormula('=1+1')).toBe(true);
    expect(looksLikeFormula('+1')).toBe(false);
    expect(looksLikeFormula('-cmd')).toBe(true);
    expect(looksLikeFormula('a=b')).toBe(false);
  });
});

describe('export cells', () => {
  it('escapes text that would run as a formula and keeps numbers typed', () => {
    expect(safeText('=SUM(A1)')).toBe("'=SUM(A1)");
    expect(safeText('\tx')).toBe("'\tx");
    expect(cellValue(-5)).toBe(-5);
    expect(cellValue([{ display_value: 'Ann' }, { display_value: '@Bob' }])).toBe('Ann, @Bob');
    expect(cellValue(['@x'])).toBe("'@x");
  });
});
