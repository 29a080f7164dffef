/**
 * Equivalence: each formula function and operator the SQL endpoint compiles gives, in a WHERE
 * condition, the rows the formula language (src/modules/formulas) selects in memory — on each dialect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileFormula, evaluate, toBool, type ResultType } from '../../src/modules/formulas/index.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

const ROWS: Array<Record<string, unknown>> = [
  { Name: 'r1', A: 7, B: 2, S: 'Hello' },
  { Name: 'r2', A: -3.5, B: 0, S: 'ab' },
  { Name: 'r3', A: 0, B: -4, S: '' },
  { Name: 'r4', B: 10, S: 'Ünïcödé ✓' },
  { Name: 'r5', A: 12, S: 'x' },
  { Name: 'r6', A: 2.5, B: 0.5 },
];
const TYPES: Record<string, ResultType> = { Name: 'string', A: 'number', B: 'number', S: 'string' };

/** [formula condition, SQL condition]: the same question in both languages. */
const CASES: Array<[string, string]> = [
  ['{A} + {B} = 9', 'A + B = 9'],
  ['{A} + {B} > 0', 'A + B > 0'],
  ['{A} - {B} < 0', 'A - B < 0'],
  ['{A} * {B} = -14', "A * B = -14"],
  ['{A} * 2 >= 5', 'A * 2 >= 5'],
  ['{A} / {B} > 1', 'A / B > 1'],
  ['{A} / {B} = 3.5', 'A / B = 3.5'],
  ['{A} / 2 = 6', 'A / 2 = 6'],
  ['{A} / 2 = 1.25', 'A / 2 = 1.25'],
  ['{A} / {B} < 0', 'A / B < 0'],
  ['({A} + 1) * ({B} - 1) = 6', '(A + 1) * (B - 1) = 6'],
  ['abs({A}) > 3', 'abs(A) > 3'],
  ['abs({A} - {B}) = 5', 'abs(A - B) = 5'],
  ['sign({A}) = -1', 'sign(A) = -1'],
  ['sign({A}) = 0', 'sign(A) = 0'],
  ['len({S}) = 2', 'len(S) = 2'],
  ['len({S}) = 0', 'len(S) = 0'],
  ['len({S}) = 9', 'len(S) = 9'],
  ['left({S}, 2) = "He"', "left(S, 2) = 'He'"],
  ['left({S}) = "Ü"', "left(S) = 'Ü'"],
  ['right({S}, 3) = "dé ✓"', "right(S, 3) = 'dé ✓'"],
  ['right({S}, 3) = "llo"', "right(S, 3) = 'llo'"],
  ['right({S}, 10) = "ab"', "right(S, 10) = 'ab'"],
  ['mid({S}, 2, 3) = "ell"', "mid(S, 2, 3) = 'ell'"],
  ['mid({S}, 3, 2) = "ïc"', "mid(S, 3, 2) = 'ïc'"],
  ['concatenate({Name}, "-", {S}) = "r1-Hello"', "concatenate(Name, '-', S) = 'r1-Hello'"],
  ['concatenate({S}, {S}) = "abab"', 'concatenate(S, S) = ?'],
  ['len(concatenate({Name}, {S})) > 4', 'len(concatenate(Name, S)) > 4'],
  ['int({A}) = 2', 'int(A) = 2'],
  ['int({A}) = -3', 'int(A) = -3'],
  ['mod({A}, 2) = 1', 'mod(A, 2) = 1'],
  ['mod({A}, {B}) = 0', 'mod(A, B) = 0'],
  ['round({A} * 0.535, 2) = 3.75', 'round(A * 0.535, 2) = 3.75'],
  ['round({A}) = -4', 'round(A) = -4'],
  ['round({A}, -1) = 10', 'round(A, -1) = 10'],
  ['sqrt({A}) > 2', 'sqrt(A) > 2'],
  ['sqrt({B} * {B}) = 4', 'sqrt(B * B) = 4'],
  ['power({A}, 2) > 40', 'power(A, 2) > 40'],
  ['power({B}, 0.5) = 0', 'power(B, 0.5) = 0'],
  ['trim(concatenate(" ", {S}, "\u3000\t")) = "ab"', "trim(concatenate(' ', S, '\u3000\t')) = 'ab'"],
  ['len(trim({S})) = 0', 'len(trim(S)) = 0'],
];
const TYPES_OF_SQL: Record<string, string> = {
  '{A} + {B}': 'number',
  'len({S})': 'number',
  'left({S}, 2)': 'text',
  'concatenate({S}, "!")': 'text',
};
const PARAMS: Record<string, unknown[]> = { 'concatenate(S, S) = ?': ['abab'] };

/** [formula, SQL expression]: the same value computed per row, as a select item. */
const VALUES: Array<[string, string]> = [
  ['{A} + {B}', 'A + B'],
  ['{A} - {B}', 'A - B'],
  ['{A} * {B}', 'A * B'],
  ['{A} / {B}', 'A / B'],
  ['{A} / 2', 'A / 2'],
  ['abs({A} - {B})', 'abs(A - B)'],
  ['sign({B})', 'sign(B)'],
  ['len({S})', 'len(S)'],
  ['left({S}, 2)', 'left(S, 2)'],
  ['right({S}, 2)', 'right(S, 2)'],
  ['mid({S}, 2, 2)', 'mid(S, 2, 2)'],
  ['concatenate({S}, "!")', "concatenate(S, '!')"],
  ['int({A})', 'int(A)'],
  ['int({A} / {B})', 'int(A / B)'],
  ['mod({A}, {B})', 'mod(A, B)'],
  ['mod({A}, 3)', 'mod(A, 3)'],
  ['mod({A}, -3)', 'mod(A, -3)'],
  ['mod({A} * 10, 7)', 'mod(A * 10, 7)'],
  ['floor({A})', 'floor(A)'],
  ['ceiling({A})', 'ceiling(A)'],
  ['floor({A} / {B})', 'floor(A / B)'],
  ['ceiling({A} * -1.5)', 'ceiling(A * -1.5)'],
  ['abs({A} / {B})', 'abs(A / B)'],
  ['sign({A} / {B})', 'sign(A / B)'],
  ['mod({A}, {B}) + 1', 'mod(A, B) + 1'],
  ['concatenate({Name}, "-", {S})', "concatenate(Name, '-', S)"],
  ['round({A} / 3, 2)', 'round(A / 3, 2)'],
  ['round({A} * 0.535, 2)', 'round(A * 0.535, 2)'],
  ['round({A} * 1.005, 2)', 'round(A * 1.005, 2)'],
  ['round({A})', 'round(A)'],
  ['round({A} * 13.7, -1)', 'round(A * 13.7, -1)'],
  ['round({A} / {B}, 1)', 'round(A / B, 1)'],
  ['power({A}, 2)', 'power(A, 2)'],
  ['power({A}, {B})', 'power(A, B)'],
  ['power({B}, 0.5)', 'power(B, 0.5)'],
  ['power({B}, -1)', 'power(B, -1)'],
  ['power(10, {A} * 100)', 'power(10, A * 100)'],
  ['sqrt({A})', 'sqrt(A)'],
  ['sqrt({B} + 4)', 'sqrt(B + 4)'],
  ['trim({S})', 'trim(S)'],
  ['trim(concatenate("\u00a0 ", {S}, " \n"))', "trim(concatenate('\u00a0 ', S, ' \n'))"],
];

/** The formula's value per row (ordered by Name), with '' as empty like the SQL answer. */
function valuesInMemory(formula: string): unknown[] {
  const compiled = compileFormula(formula, (name) => (TYPES[name] ? { key: name, type: TYPES[name] } : undefined));
  return ROWS.map((row) => {
    const value = evaluate(compiled, (key) => (row[key] ?? null) as never, { now: 0, timeZone: 'UTC' });
    if (value === 0) return 0; // JSON carries no -0
    if (typeof value === 'number' && !Number.isFinite(value)) return null; // as a formula column stores it
    return value === '' || value === undefined ? null : value;
  });
}

function inMemory(formula: string): string[] {
  const compiled = compileFormula(formula, (name) => (TYPES[name] ? { key: name, type: TYPES[name] } : undefined));
  return ROWS.filter((row) => toBool(evaluate(compiled, (key) => (row[key] ?? null) as never, { now: 0, timeZone: 'UTC' }))).map((r) => r.Name as string);
}

describe.each(DIALECTS)('formula functions in SQL conditions equal the formula library (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Calc', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'A', column_type: 'number' },
      { column_name: 'B', column_type: 'number' },
      { column_name: 'S', column_type: 'text' },
    ]);
    await appendRows(g, 'Calc', ROWS);
  });
  afterAll(() => t.close());

  it.each(CASES)('%s ≡ %s', async (formula, condition) => {
    const res = await g.call('POST', 'sql/', { sql: `SELECT Name FROM Calc WHERE ${condition} ORDER BY Name`, convert_keys: true, parameters: PARAMS[condition] ?? [] });
    expect(res.statusCode, res.body).toBe(200);
    const viaSql = res.json().results.map((r: { Name: string }) => r.Name);
    expect(viaSql).toEqual(inMemory(formula));
  });

  it.each(VALUES)('select %s ≡ %s', async (formula, expression) => {
    const res = await g.call('POST', 'sql/', { sql: `SELECT Name, ${expression} FROM Calc ORDER BY Name`, convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    // The computed column is named by its text, as the original names it: a function's name upper-cased.
    const key = /^[a-z]+\([\s\S]*\)$/.test(expression) ? expression.replace(/^[a-z]+/, (name) => name.toUpperCase()) : expression;
    expect(body.metadata[1]).toEqual({ key, name: key, type: TYPES_OF_SQL[formula] ?? expect.any(String), data: null });
    expect(body.results.map((r: Record<string, unknown>) => r[key])).toEqual(valuesInMemory(formula));
  });

  it('orders by an expression, its alias or its position, and aliases name the column', async () => {
    const expected = ROWS.map((r, i) => ({ name: r.Name as string, d: valuesInMemory('abs({A} - {B})')[i] as number }))
      .sort((x, y) => x.d - y.d || x.name.localeCompare(y.name))
      .map((x) => x.name);
    for (const text of [
      'SELECT Name, abs(A - B) AS d FROM Calc ORDER BY abs(A - B), Name',
      'SELECT Name, abs(A - B) AS d FROM Calc ORDER BY d, Name',
      'SELECT Name, abs(A - B) AS d FROM Calc ORDER BY 2, Name',
    ]) {
      const res = await g.call('POST', 'sql/', { sql: text, convert_keys: true });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().results.map((r: { Name: string }) => r.Name), text).toEqual(expected);
      expect(res.json().metadata[1]).toEqual({ key: 'd', name: 'd', type: 'number', data: null });
    }
    const desc = await g.call('POST', 'sql/', { sql: 'SELECT Name FROM Calc ORDER BY len(S) DESC, Name LIMIT 2', convert_keys: true });
    expect(desc.json().results.map((r: { Name: string }) => r.Name)).toEqual(['r4', 'r1']);
  });

  it('computes expressions over group keys and aggregates', async () => {
    const res = await g.call('POST', 'sql/', {
      sql: "SELECT S, concatenate(S, '?') AS q, COUNT(*) * 10 AS n, abs(SUM(A) - 1) FROM Calc GROUP BY S ORDER BY COUNT(*) * 10 DESC, S",
      convert_keys: true,
    });
    expect(res.statusCode, res.body).toBe(200);
    const first = res.json().results[0];
    // The empty S groups r6 (A 2.5) with no other row… and r3 (A 0): two rows, SUM(A) 2.5.
    expect(first).toEqual({ S: null, q: '?', n: 20, 'ABS(SUM(A) - 1)': 1.5 });
    expect(res.json().results.length).toBe(5);
  });

  it.each([
    ['sign({B})', 'SELECT sign(B) AS k, COUNT(*) AS n FROM Calc GROUP BY sign(B) ORDER BY k'],
    ['sign({B})', 'SELECT sign(B) AS k, COUNT(*) AS n FROM Calc GROUP BY 1 ORDER BY 1'],
    ['sign({B})', 'SELECT sign(B) AS k, COUNT(*) AS n FROM Calc GROUP BY k ORDER BY sign( B )'],
    ['left({S}, 1)', 'SELECT left(S, 1) AS k, COUNT(*) AS n FROM Calc GROUP BY left(S,1) ORDER BY k'],
    ['{A} * 2', 'SELECT A * 2 AS k, COUNT(*) AS n FROM Calc GROUP BY A * 2 ORDER BY k'],
  ])('groups by %s: %s', async (formula, text) => {
    const counts = new Map<unknown, number>();
    for (const v of valuesInMemory(formula)) counts.set(v, (counts.get(v) ?? 0) + 1);
    const expected = [...counts]
      .sort(([x], [y]) => (x === null ? -1 : y === null ? 1 : x! < y! ? -1 : x! > y! ? 1 : 0))
      .map(([k, n]) => ({ k, n }));
    const res = await g.call('POST', 'sql/', { sql: text, convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results).toEqual(expected);
  });

  it('names a grouped expression by its text and refuses aggregates in GROUP BY', async () => {
    const res = await g.call('POST', 'sql/', { sql: 'SELECT len(S), SUM(B) FROM Calc GROUP BY len(S) ORDER BY len(S) DESC', convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results[0]).toEqual({ 'LEN(S)': 9, 'SUM(B)': 10 });
    expect(res.json().metadata[0]).toEqual({ key: 'LEN(S)', name: 'LEN(S)', type: 'number', data: null });
    const bad = await g.call('POST', 'sql/', { sql: 'SELECT COUNT(*) FROM Calc GROUP BY abs(COUNT(*))' });
    expect(bad.statusCode).toBe(400);
    expect(JSON.stringify(bad.json())).toMatch(/Aggregates are not allowed in GROUP BY/);
  });

  it('uses functions in HAVING over aggregates and refuses what it does not compile', async () => {
    const res = await g.call('POST', 'sql/', { sql: 'SELECT S, COUNT(*) FROM Calc GROUP BY S HAVING abs(COUNT(*) - 3) = 2', convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    // Groups: Hello, ab, Ünïcödé ✓, x (one row each) and the empty S (two rows).
    expect(res.json().results.length).toBe(4);
    const refused: Array<[string, RegExp]> = [
      ['SELECT Name FROM Calc WHERE nosuchfn(S) = 1', /Function nosuchfn is not supported/],
      ['SELECT Name, nosuchfn(S) FROM Calc', /Function nosuchfn is not supported/],
      ['SELECT Name FROM Calc ORDER BY upper(S)', /ORDER BY cannot use functions computed by the formula engine/],
      ['SELECT S, COUNT(*) FROM Calc WHERE upper(S) = 1 GROUP BY S', /cannot be combined with GROUP BY/],
      ['SELECT Name, upper(S) LIKE 1 FROM Calc', /Operator LIKE cannot be combined with function upper/],
      ['SELECT Name, S + 1 FROM Calc', /\+ needs numbers; S is string/],
      ['SELECT S, len(Name) FROM Calc GROUP BY S', /Name must appear in GROUP BY/],
      ['SELECT Name FROM Calc ORDER BY A % 2', /Operator % is not supported/],
      ['SELECT DISTINCT len(S) FROM Calc', /S must appear in GROUP BY/],
      ['SELECT abs(A) FROM Calc GROUP BY S', /A must appear in GROUP BY/],
      ['SELECT *, abs(A) FROM Calc', /\* cannot be combined/],
      ['SELECT len(S) FROM Calc ORDER BY abs(COUNT(*))', /ORDER BY must name a column/],
      ['SELECT mod(A) FROM Calc', /Function mod takes 2 arguments/],
      ['SELECT Name FROM Calc WHERE S + 1 = 2', /\+ needs numbers; S is string/],
      ['SELECT Name FROM Calc WHERE left(S, A) = 1', /left needs a whole number of at least 0 as a constant/],
      ['SELECT Name FROM Calc WHERE abs(A, B) = 1', /Function abs takes 1 arguments/],
      ['SELECT round(A, B) FROM Calc', /round needs a whole number from -15 to 15 as a constant/],
      ['SELECT round(A, 2.5) FROM Calc', /round needs a whole number from -15 to 15 as a constant/],
      ['SELECT sqrt(S) FROM Calc', /sqrt needs numbers; S is string/],
      ['SELECT trim(A) FROM Calc', /trim needs text; A is number/],
      [`SELECT Name FROM Calc WHERE ${Array(100).fill('A').join(' + ')} = 1`, /nested too deeply \(at most 64 levels\)/],
    ];
    for (const [text, message] of refused) {
      const bad = await g.call('POST', 'sql/', { sql: text });
      expect(bad.statusCode, text).toBe(400);
      expect(JSON.stringify(bad.json())).toMatch(message);
    }
  });
});
