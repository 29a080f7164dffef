import { describe, expect, it } from 'vitest';
import { coerceCell, normalizeDate, type Coerced } from './cell-coercion.js';
import { newColumn } from './default-metadata.js';
import type { ColumnMeta } from './metadata.js';

const column = (type: string, data: Record<string, unknown> | null = null): ColumnMeta => newColumn('k001', 'Col', type, data);
const set = (value: unknown): Coerced => ({ kind: 'set', value });
const CLEAR: Coerced = { kind: 'clear' };
const IGNORE: Coerced = { kind: 'ignore' };
const isInvalid = (c: Coerced) => c.kind === 'invalid';

describe('coerceCell', () => {
  it('clears empty values for every data type except checkbox', () => {
    for (const type of ['text', 'number', 'date', 'single-select', 'multiple-select', 'collaborator', 'file', 'image', 'email', 'url', 'rate', 'duration', 'long-text', 'geolocation', 'auto-number']) {
      for (const empty of [null, undefined, '', []]) expect(coerceCell(column(type), empty), `${type} ${JSON.stringify(empty)}`).toEqual(CLEAR);
    }
  });

  it('ignores computed and link columns whatever the value', () => {
    for (const type of ['creator', 'ctime', 'mtime', 'last-modifier', 'button', 'link']) {
      expect(coerceCell(column(type), 'anything')).toEqual(IGNORE);
      expect(coerceCell(column(type), null)).toEqual(IGNORE);
    }
  });

  it.each([
    ['text', 'hello', 'hello'],
    ['text', 12, '12'],
    ['text', 1.5, '1.5'],
    ['text', true, 'true'],
    ['email', 'a@b.example', 'a@b.example'],
    ['url', 'https://x.example', 'https://x.example'],
    ['auto-number', 'ID-7', 'ID-7'],
    ['long-text', 'para', 'para'],
    ['long-text', { text: 'rich', preview: 'r' }, 'rich'],
  ])('%s: %j → %j', (type, input, output) => {
    expect(coerceCell(column(type), input)).toEqual(set(output));
  });

  it('refuses objects, arrays and non-finite numbers as text', () => {
    for (const value of [{ a: 1 }, ['x'], Number.NaN, Number.POSITIVE_INFINITY]) expect(isInvalid(coerceCell(column('text'), value))).toBe(true);
    expect(coerceCell(column('long-text'), { text: '' })).toEqual(CLEAR);
  });

  it.each([
    [3, 3],
    [-2.5, -2.5],
    ['42', 42],
    [' 1.5 ', 1.5],
    ['-.5', -0.5],
    ['1e3', 1000],
    ['+7', 7],
  ])('number: %j → %j', (input, output) => {
    expect(coerceCell(column('number'), input)).toEqual(set(output));
  });

  it('refuses what is not a number', () => {
    for (const value of ['abc', '1,5', '12px', true, {}, [1], Number.NaN, '1e999', '0x10']) {
      expect(isInvalid(coerceCell(column('number'), value)), JSON.stringify(value)).toBe(true);
    }
    expect(coerceCell(column('number'), '   ')).toEqual(CLEAR);
  });

  it('takes whole non-negative ratings without a range check', () => {
    expect(coerceCell(column('rate'), 4)).toEqual(set(4));
    expect(coerceCell(column('rate'), '11')).toEqual(set(11));
    expect(coerceCell(column('rate'), 0)).toEqual(set(0));
    for (const value of [2.5, -1, 'x']) expect(isInvalid(coerceCell(column('rate'), value))).toBe(true);
  });

  it.each([
    [90, 90],
    ['90', 90],
    ['1:30', 5400],
    ['0:05', 300],
    ['1:02:03', 3723],
    [' 12:00 ', 43200],
  ])('duration: %j → %j seconds', (input, output) => {
    expect(coerceCell(column('duration'), input)).toEqual(set(output));
  });

  it('refuses malformed durations', () => {
    for (const value of ['1:60', 'soon', '1:2:3:4', true]) expect(isInvalid(coerceCell(column('duration'), value))).toBe(true);
  });

  it.each([
    [true, true],
    [1, true],
    ['true', true],
    ['TRUE', true],
    ['1', true],
    [false, false],
    [0, false],
    ['false', false],
    ['0', false],
    [null, false],
    ['', false],
  ])('checkbox: %j → %j', (input, output) => {
    expect(coerceCell(column('checkbox'), input)).toEqual(set(output));
  });

  it('refuses other checkbox values', () => {
    for (const value of ['yes', 2, {}, []]) expect(isInvalid(coerceCell(column('checkbox'), value))).toBe(true);
  });

  it('stores dates as YYYY-MM-DD or YYYY-MM-DD HH:mm and refuses the rest', () => {
    expect(coerceCell(column('date'), '2024-03-01')).toEqual(set('2024-03-01'));
    expect(coerceCell(column('date'), '2024-3-1')).toEqual(set('2024-03-01'));
    expect(coerceCell(column('date'), '2024-03-01 09:05')).toEqual(set('2024-03-01 09:05'));
    for (const value of [12345, '2024-13-01', '32.01.2024', '2024/02/30', '13/13/2024', '1.3.24', { d: 1 }]) expect(isInvalid(coerceCell(column('date'), value))).toBe(true);
  });

  it('accepts the display formats, each with an optional HH:mm; slash dates with the year last follow the column format', () => {
    const withFormat = (format: string) => column('date', { format });
    expect(coerceCell(column('date'), '2024/03/01')).toEqual(set('2024-03-01'));
    expect(coerceCell(column('date'), '2024/03/01 09:05')).toEqual(set('2024-03-01 09:05'));
    expect(coerceCell(column('date'), '01.03.2024')).toEqual(set('2024-03-01'));
    expect(coerceCell(column('date'), '1.3.2024 18:30')).toEqual(set('2024-03-01 18:30'));
    expect(coerceCell(withFormat('M/D/YYYY'), '3/1/2024')).toEqual(set('2024-03-01'));
    expect(coerceCell(withFormat('M/D/YYYY HH:mm'), '3/1/2024 07:15')).toEqual(set('2024-03-01 07:15'));
    expect(coerceCell(withFormat('DD/MM/YYYY'), '03/01/2024')).toEqual(set('2024-01-03'));
    expect(coerceCell(withFormat('DD/MM/YYYY HH:mm'), '31/12/2024 23:59')).toEqual(set('2024-12-31 23:59'));
    expect(isInvalid(coerceCell(withFormat('DD/MM/YYYY'), '12/31/2024'))).toBe(true);
    expect(isInvalid(coerceCell(withFormat('M/D/YYYY'), '31/12/2024'))).toBe(true);
  });

  it('a date-only column keeps the day written with an offset; a date-time column converts the offset', () => {
    expect(coerceCell(column('date', { format: 'YYYY-MM-DD' }), '2030-06-20T00:00:00+02:00')).toEqual(set('2030-06-20'));
    expect(coerceCell(column('date', { format: 'DD.MM.YYYY' }), '2030-06-20T23:30:00-05:00')).toEqual(set('2030-06-20'));
    expect(coerceCell(column('date', { format: 'YYYY-MM-DD HH:mm' }), '2030-06-20T00:00:00+02:00')).toEqual(set('2030-06-19 22:00'));
    expect(coerceCell(column('date', { format: 'YYYY-MM-DD HH:mm' }), '2030-06-20T23:55:00Z')).toEqual(set('2030-06-20 23:55'));
  });

  it('single-select: keeps known names, maps ids to names, creates unknown options', () => {
    const c = column('single-select', { options: [{ id: '123456', name: 'open', color: '#FFFFFF', textColor: '#000000' }] });
    expect(coerceCell(c, 'open')).toEqual(set('open'));
    expect(coerceCell(c, '123456')).toEqual(set('open'));
    expect(coerceCell(c, 'closed')).toEqual(set('closed'));
    expect(coerceCell(c, 7)).toEqual(set('7'));
    const options = c.data!.options as Array<{ id: string; name: string; color: string }>;
    expect(options.map((o) => o.name)).toEqual(['open', 'closed', '7']);
    expect(new Set(options.map((o) => o.id)).size).toBe(3);
    expect(options[1]!.color).toMatch(/^#[0-9A-F]{6}$/i);
    expect(coerceCell(c, '  ')).toEqual(CLEAR);
    for (const value of [['open'], { name: 'x' }, true]) expect(isInvalid(coerceCell(c, value))).toBe(true);
  });

  it('multiple-select: wraps a single name, de-duplicates, creates options once', () => {
    const c = column('multiple-select', { options: [] });
    expect(coerceCell(c, 'a')).toEqual(set(['a']));
    expect(coerceCell(c, ['a', 'b', 'a', '', 3])).toEqual(set(['a', 'b', '3']));
    expect((c.data!.options as unknown[]).length).toBe(3);
    expect(coerceCell(c, ['', ' '])).toEqual(CLEAR);
    expect(isInvalid(coerceCell(c, [{}]))).toBe(true);
  });

  it('collaborator and image cells take strings or lists of strings', () => {
    expect(coerceCell(column('collaborator'), 'u@auth.local')).toEqual(set(['u@auth.local']));
    expect(coerceCell(column('collaborator'), ['a', 'a', 'b'])).toEqual(set(['a', 'b']));
    expect(isInvalid(coerceCell(column('collaborator'), [1]))).toBe(true);
    expect(coerceCell(column('image'), 'https://i/x.png')).toEqual(set(['https://i/x.png']));
    expect(isInvalid(coerceCell(column('image'), { url: 'x' }))).toBe(true);
  });

  it('file cells take {name, url} objects', () => {
    const file = { name: 'a.pdf', url: '/a.pdf', size: 1 };
    expect(coerceCell(column('file'), file)).toEqual(set([file]));
    expect(coerceCell(column('file'), [file, file])).toEqual(set([file, file]));
    for (const value of ['a.pdf', [{ name: 'a' }], [null]]) expect(isInvalid(coerceCell(column('file'), value))).toBe(true);
  });

  it('geolocation takes an object; unknown types store the value as sent', () => {
    expect(coerceCell(column('geolocation'), { lat: 1 })).toEqual(set({ lat: 1 }));
    expect(isInvalid(coerceCell(column('geolocation'), [1]))).toBe(true);
    expect(coerceCell(column('some-future-type'), { x: 1 })).toEqual(set({ x: 1 }));
  });
});

describe('normalizeDate', () => {
  it.each([
    ['2024-02-29', '2024-02-29'],
    ['2024-02-29 7:05', '2024-02-29 07:05'],
    ['2024-02-29T07:05:59', '2024-02-29 07:05'],
    ['2024-02-29T07:05:59.123Z', '2024-02-29 07:05'],
    ['2024-02-29T01:00+02:00', '2024-02-28 23:00'],
    ['2024-02-29T23:30-0130', '2024-03-01 01:00'],
    [' 2024-01-01 ', '2024-01-01'],
  ])('%s → %s', (input, output) => {
    expect(normalizeDate(input)).toBe(output);
  });

  it.each(['2023-02-29', '2024-00-10', '2024-01-32', '2024-01-01 24:00', '2024-01-01 10:60', '2024-01-01T10:00+15:00', 'tomorrow', '', '20240101'])('refuses %s', (input) => {
    expect(normalizeDate(input)).toBeNull();
  });
});
