import { describe, expect, it } from 'vitest';
import { SqlError } from './sql-error.js';
import {
  likeSearchRuns,
  bindParameters,
  canonicalDate,
  constantOf,
  dateToIso,
  isoMillis,
  likeForPostgres,
  likeToGlob,
  parseInstant,
  toFlag,
  toInstant,
  toNumber,
  toText,
  unescapeIdentifier,
  unescapeString,
} from './values.js';

describe('string literals', () => {
  it.each([
    ["it''s", "'", "it's"],
    ['say ""hi""', '"', 'say "hi"'],
    ["it\\'s", "'", "it's"],
    ['a\\\\b', "'", 'a\\b'],
    ['line\\nbreak\\ttab\\rret', "'", 'line\nbreak\ttab\rret'],
    ['zero\\0', "'", 'zero\0'],
    ['100\\% \\_x', "'", '100\\% \\_x'],
    ['\\q', "'", 'q'],
    ['trailing\\', "'", 'trailing\\'],
    ['plain', '"', 'plain'],
  ] as const)('unescapes %j (%s-quoted) to %j', (raw, quote, expected) => {
    expect(unescapeString(raw, quote)).toBe(expected);
  });

  it('unescapes doubled backticks in identifiers', () => {
    expect(unescapeIdentifier('a``b')).toBe('a`b');
    expect(unescapeIdentifier('Full Name')).toBe('Full Name');
  });
});

describe('constants', () => {
  const bindings = new Map();
  it.each([
    [{ type: 'number', value: 5 }, 5],
    [{ type: 'number', value: '-1.5' }, -1.5],
    [{ type: 'bigint', value: '99999999999999999999' }, 1e20],
    [{ type: 'single_quote_string', value: "it''s" }, "it's"],
    [{ type: 'double_quote_string', value: 'x' }, 'x'],
    [{ type: 'bool', value: true }, true],
    [{ type: 'null', value: null }, null],
    [{ type: 'unary_expr', operator: '-', expr: { type: 'number', value: 3 } }, -3],
    [{ type: 'unary_expr', operator: '+', expr: { type: 'number', value: 3 } }, 3],
  ])('%j is %j', (node, value) => {
    expect(constantOf(node, bindings)).toBe(value);
  });

  it.each([
    [{ type: 'column_ref', column: 'a' }],
    [{ type: 'hex_string', value: '41' }],
    [{ type: 'unary_expr', operator: '-', expr: { type: 'column_ref', column: 'a' } }],
    [{ type: 'unary_expr', operator: '-', expr: { type: 'single_quote_string', value: 'x' } }],
    [{ type: 'origin', value: '?' }],
  ])('%j is not a constant', (node) => {
    expect(constantOf(node, bindings)).toBeUndefined();
  });

  it('refuses NUL characters in text and numbers out of range', () => {
    expect(() => constantOf({ type: 'single_quote_string', value: 'a\0b' }, bindings)).toThrow('Text values cannot contain NUL characters.');
    expect(() => constantOf({ type: 'bigint', value: '9'.repeat(400) }, bindings)).toThrow(SqlError);
  });
});

describe('parameters', () => {
  const nodes = [{ type: 'origin', value: '?' }, { type: 'origin', value: '?' }];

  it('binds scalars to placeholders in order', () => {
    const bound = bindParameters(nodes, ['a', 2]);
    expect(constantOf(nodes[0]!, bound)).toBe('a');
    expect(constantOf(nodes[1]!, bound)).toBe(2);
    expect(constantOf(nodes[0]!, bindParameters(nodes, [null, true]))).toBeNull();
  });

  it.each([
    [['a'], 'The statement has 2 placeholder(s) but 1 parameter(s) were given.'],
    [['a', 'b', 'c'], 'The statement has 2 placeholder(s) but 3 parameter(s) were given.'],
    [['a', {}], 'Parameter 2 must be a string, a number, a boolean or null.'],
    [[[1], 'a'], 'Parameter 1 must be a string, a number, a boolean or null.'],
    [['a', Number.NaN], 'Parameter 2 must be a string, a number, a boolean or null.'],
    [['a', Number.POSITIVE_INFINITY], 'Parameter 2 must be a string, a number, a boolean or null.'],
    [['a\0', 'b'], 'Parameter 1 contains a NUL character.'],
  ])('refuses %j', (parameters, message) => {
    expect(() => bindParameters(nodes, parameters)).toThrow(message);
  });
});

describe('type coercion of constants', () => {
  it('reads numbers from numbers, numeric text and booleans only', () => {
    expect(toNumber(' 42 ', 'x')).toBe(42);
    expect(toNumber('-1.5e2', 'x')).toBe(-150);
    expect(toNumber(true, 'x')).toBe(1);
    for (const bad of ['abc', '', 'NaN', 'Infinity', '1 OR 1=1', '0x10', null]) expect(() => toNumber(bad, 'Age')).toThrow(/Age expects a number/);
  });

  it('reads text from text, numbers and booleans, never NULL', () => {
    expect(toText(5, 'x')).toBe('5');
    expect(toText(false, 'x')).toBe('false');
    expect(() => toText(null, 'Name')).toThrow('Name expects text, got NULL.');
  });

  it('reads checkbox flags', () => {
    expect([true, 1, 'true', ' TRUE ', '1'].map((v) => toFlag(v, 'x'))).toEqual([1, 1, 1, 1, 1]);
    expect([false, 0, 'false', '0'].map((v) => toFlag(v, 'x'))).toEqual([0, 0, 0, 0]);
    for (const bad of ['yes', 2, null, '']) expect(() => toFlag(bad, 'Done')).toThrow(/Done expects true or false/);
  });
});

describe('dates', () => {
  it.each([
    ['2024-05-31', Date.UTC(2024, 4, 31)],
    ['2024-5-3', Date.UTC(2024, 4, 3)],
    ['2024-05-31 08:15', Date.UTC(2024, 4, 31, 8, 15)],
    ['2024-05-31T08:15:30', Date.UTC(2024, 4, 31, 8, 15, 30)],
    ['2024-05-31T08:15:30.25Z', Date.UTC(2024, 4, 31, 8, 15, 30, 250)],
    ['2024-05-31T08:15:30+02:00', Date.UTC(2024, 4, 31, 6, 15, 30)],
    ['2024-05-31T08:15:30-0130', Date.UTC(2024, 4, 31, 9, 45, 30)],
    ['2024-05-31 00:30 +01', Date.UTC(2024, 4, 30, 23, 30)],
    ['2024-02-29', Date.UTC(2024, 1, 29)],
    ['0050-01-01', -60589296000000],
  ])('parses %s', (text, ms) => {
    expect(parseInstant(text)).toBe(ms);
  });

  it.each(['2023-02-29', '2024-13-01', '2024-04-31', '2024-05-31 24:00', '2024-05-31T10:60', 'yesterday', '31.05.2024', '2024-05-31T10:00+15:00', ''])(
    'refuses %j',
    (text) => {
      expect(parseInstant(text)).toBeNull();
      expect(() => toInstant(text, 'Birthday')).toThrow(/Birthday expects a date/);
    },
  );

  it('canonical text drops zero seconds so it equals stored cells', () => {
    expect(canonicalDate(Date.UTC(2024, 4, 31))).toBe('2024-05-31 00:00');
    expect(canonicalDate(Date.UTC(2024, 4, 31, 8, 15))).toBe('2024-05-31 08:15');
    expect(canonicalDate(Date.UTC(2024, 4, 31, 8, 15, 30))).toBe('2024-05-31 08:15:30');
    expect(canonicalDate(Date.UTC(2024, 4, 31, 8, 15, 0, 5))).toBe('2024-05-31 08:15:00.005');
  });

  it('answers stored dates and timestamps as RFC 3339 in UTC', () => {
    expect(dateToIso('2024-05-31')).toBe('2024-05-31T00:00:00+00:00');
    expect(dateToIso('2024-05-31 08:15')).toBe('2024-05-31T08:15:00+00:00');
    expect(dateToIso('2024-05-31 08:15:30')).toBe('2024-05-31T08:15:30+00:00');
    expect(dateToIso('garbage')).toBe('garbage');
    expect(dateToIso(null)).toBeNull();
    expect(isoMillis(Date.UTC(2021, 2, 10, 16, 6, 48, 981))).toBe('2021-03-10T16:06:48.981+00:00');
  });
});

describe('LIKE patterns', () => {
  it.each([
    ['A%', 'A*'],
    ['_ob', '?ob'],
    ['100\\%', '100%'],
    ['a\\_b', 'a_b'],
    ['*?[x]', '[*][?][[]x]'],
    ['\\\\', '\\'],
    ['trailing\\', 'trailing\\'],
    ['', ''],
  ])('%j becomes the GLOB %j', (like, glob) => {
    expect(likeToGlob(like)).toBe(glob);
  });

  it('lets a trailing lone backslash match itself on PostgreSQL', () => {
    expect(likeForPostgres('a\\')).toBe('a\\\\');
    expect(likeForPostgres('a\\\\')).toBe('a\\\\');
    expect(likeForPostgres('a%')).toBe('a%');
  });
});

describe('likeSearchRuns', () => {
  it('answers the literal runs of 3 characters or more, folded, split at wildcards and at what JSON may escape', () => {
    expect(likeSearchRuns('%Zebra Stripe%')).toEqual(['zebra stripe']);
    expect(likeSearchRuns('%50\\%_off%')).toEqual(['50%', 'off']);
    expect(likeSearchRuns('%a_b%')).toEqual([]);
    expect(likeSearchRuns('abc%de%FGH')).toEqual(['abc', 'fgh']);
    expect(likeSearchRuns('say "hello"')).toEqual(['say ', 'hello']);
    expect(likeSearchRuns('back\\\\slash')).toEqual(['back', 'slash']);
    expect(likeSearchRuns('café crème')).toEqual(['caf', ' cr']);
  });
});
