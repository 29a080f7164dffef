import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from './python-json.js';

// Expected texts were produced by CPython 3.11's json.dumps on the same values.
describe('pythonJsonDumps', () => {
  it.each([
    [null, 'null'],
    [true, 'true'],
    [false, 'false'],
    [0, '0'],
    [-7, '-7'],
    [123456789012, '123456789012'],
    [1.5, '1.5'],
    [-2.25, '-2.25'],
    [0.1, '0.1'],
    [1649929622.589, '1649929622.589'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [-0.00012, '-0.00012'],
    [1e16, '1e+16'],
    [1.2345e20, '1.2345e+20'],
    [1e22, '1e+22'],
    [123456789.125, '123456789.125'],
    [9007199254740992, '9007199254740992.0'],
    [Number.NaN, 'null'],
    [Number.POSITIVE_INFINITY, 'null'],
    ['', '""'],
    ['plain / text', '"plain / text"'],
    ['quote " backslash \\', '"quote \\" backslash \\\\"'],
    ['\n\r\t\b\f', '"\\n\\r\\t\\b\\f"'],
    ['\u0000\u001f\u007f', '"\\u0000\\u001f\\u007f"'],
    ['héllo wörld', '"h\\u00e9llo w\\u00f6rld"'],
    ['中文', '"\\u4e2d\\u6587"'],
    ['😀', '"\\ud83d\\ude00"'],
    [[], '[]'],
    [{}, '{}'],
    [[1, 'a', null, [true]], '[1, "a", null, [true]]'],
    [{ b: 1, a: { c: [] } }, '{"b": 1, "a": {"c": []}}'],
    [{ 'ké y': 'v' }, '{"k\\u00e9 y": "v"}'],
  ])('writes %j as Python does', (value, expected) => {
    expect(pythonJsonDumps(value)).toBe(expected);
  });

  it('drops undefined members and writes undefined array items as null, like JSON.stringify', () => {
    expect(pythonJsonDumps({ a: undefined, b: 1, c: () => 1 })).toBe('{"b": 1}');
    expect(pythonJsonDumps([undefined, 1])).toBe('[null, 1]');
    expect(pythonJsonDumps(undefined)).toBe('null');
  });

  it('uses toJSON (dates) and writes bigint digits', () => {
    expect(pythonJsonDumps({ at: new Date(Date.UTC(2026, 0, 5)) })).toBe('{"at": "2026-01-05T00:00:00.000Z"}');
    expect(pythonJsonDumps(12345678901234567890n)).toBe('12345678901234567890');
  });

  it('always yields pure ASCII that JSON.parse reads back to the same value', () => {
    const value = { name: 'Zoë 😀', n: [1, 2.5, -0.001, 1e-9], nested: { ok: true, none: null }, text: 'a\u2028b' };
    const text = pythonJsonDumps(value);
    expect(/^[\x20-\x7e]*$/.test(text)).toBe(true);
    expect(JSON.parse(text)).toEqual(value);
  });
});
