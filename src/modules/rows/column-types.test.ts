import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { addSelectOption, checkColumnName, checkColumnType, normalizeColumnData } from './column-types.js';
import { newColumn } from './default-metadata.js';

const message = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error instanceof AppError ? (error.body?.error_msg as string) : String(error);
  }
  return 'no error';
};

describe('column types', () => {
  it('accepts the supported types and names the unsupported ones', () => {
    expect(checkColumnType('single-select')).toBe('single-select');
    expect(message(() => checkColumnType('department-single-select'))).toBe('column type department-single-select is not supported.');
    expect(checkColumnType('link-formula')).toBe('link-formula');
    expect(checkColumnType('formula')).toBe('formula');
    expect(message(() => checkColumnType('wat'))).toBe('column_type wat invalid.');
    expect(message(() => checkColumnType(3))).toBe('column_type invalid.');
  });

  it('checks column names', () => {
    expect(checkColumnName('  Price ')).toBe('Price');
    for (const bad of ['', '   ', 'a.b', 'a{b}', 'a`b', 'x'.repeat(256), 5, '_id', '_mtime']) expect(message(() => checkColumnName(bad))).toBe('column_name invalid.');
  });

  it('fills the defaults of each type', () => {
    expect(normalizeColumnData('number', undefined)).toEqual({ format: 'number', decimal: 'dot', thousands: 'no' });
    expect(normalizeColumnData('date', null)).toEqual({ format: 'YYYY-MM-DD' });
    expect(normalizeColumnData('duration', {})).toEqual({ format: 'duration', duration_format: 'h:mm' });
    expect(normalizeColumnData('rate', {})).toEqual({ rate_max_number: 5, rate_style_color: '#FF8000', rate_style_type: 'dtable-icon-rate' });
    expect(normalizeColumnData('auto-number', { digits: 3, prefix: 'A' })).toEqual({ format: '000', digits: 3, prefix_type: 'string', prefix: 'A', max_used_auto_number: 0 });
    expect(normalizeColumnData('text', undefined)).toBeNull();
    expect(normalizeColumnData('text', { hint: 'x' })).toEqual({ hint: 'x' });
    expect(normalizeColumnData('number', '{"format":"euro"}')).toMatchObject({ format: 'euro' });
  });

  it('validates column_data fields', () => {
    expect(message(() => normalizeColumnData('number', { format: 'btc' }))).toBe('column_data.format invalid.');
    expect(message(() => normalizeColumnData('date', { format: 'YY' }))).toBe('column_data.format invalid.');
    expect(message(() => normalizeColumnData('rate', { rate_max_number: 0 }))).toBe('column_data.rate_max_number invalid.');
    expect(message(() => normalizeColumnData('rate', { rate_style_color: 'red' }))).toBe('column_data.rate_style_color invalid.');
    expect(message(() => normalizeColumnData('auto-number', { digits: 0 }))).toBe('column_data.digits invalid.');
    expect(message(() => normalizeColumnData('text', [1]))).toBe('column_data invalid.');
    expect(message(() => normalizeColumnData('text', '{oops'))).toBe('column_data invalid.');
    expect(message(() => normalizeColumnData('single-select', { options: 'x' }))).toBe('column_data.options invalid.');
    expect(message(() => normalizeColumnData('single-select', { options: [{ name: '' }] }))).toBe('column_data.options.0.name invalid.');
    expect(message(() => normalizeColumnData('single-select', { options: [{ name: 'a', textColor: '#12' }] }))).toBe('column_data.options.0.textColor invalid.');
  });

  it('gives select options unique ids and palette colours, keeping valid given ids', () => {
    const data = normalizeColumnData('multiple-select', { options: [{ name: 'a', id: 'keep01' }, { name: 'b', id: 'keep01' }, { name: 3 }] })!;
    const options = data.options as Array<{ id: string; name: string; color: string; textColor: string }>;
    expect(options.map((o) => o.name)).toEqual(['a', 'b', '3']);
    expect(options[0]!.id).toBe('keep01');
    expect(new Set(options.map((o) => o.id)).size).toBe(3);
    for (const o of options) expect(o.color).toMatch(/^#[0-9A-F]{6}$/i);
  });

  it('keeps the options of a select column converted to the other select type', () => {
    const existing = newColumn('k', 'S', 'single-select', { options: [{ id: '1', name: 'x', color: '#FFFFFF', textColor: '#000000' }] });
    expect(normalizeColumnData('multiple-select', undefined, existing)).toEqual({ options: [{ id: '1', name: 'x', color: '#FFFFFF', textColor: '#000000' }] });
  });

  it('adds an option to a column without options', () => {
    const c = newColumn('k', 'S', 'single-select', null);
    const option = addSelectOption(c, 'new');
    expect(c.data).toEqual({ options: [option] });
    expect(option.id).toMatch(/^\d{6}$/);
  });
});
