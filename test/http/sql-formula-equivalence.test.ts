/**
 * Equivalence table (issue #26 item 3): every function of the formula library, computed by a formula
 * column and by the SQL endpoint (select list and WHERE), gives the same value on each dialect — text
 * (non-ASCII case folding included), numbers, dates in TIME_ZONE and empty cells.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../src/modules/formulas/index.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

const ROWS: Array<Record<string, unknown>> = [
  { Name: 'r1', A: 7, B: 2, S: 'hello wörld', D: '2024-03-31 23:30', Tags: ['x', 'y'] },
  { Name: 'r2', A: -3.33, B: 0.5, S: 'ÉLAN straße', D: '2024-10-27 02:30', Tags: ['y'] },
  { Name: 'r3', A: 0, B: 16, S: 'ǅemal İstanbul ΣΊΣΥΦΟΣ', D: '2023-12-31' },
  { Name: 'r4' },
];

/**
 * [formula, SQL expression when it differs from the formula with `{X}` → `X` and `"` → `'`]. Every
 * function of the library appears (checked below); the few the SQL grammar cannot name are listed apart.
 */
const CASES: Array<[string, string?]> = [
  // math
  ['abs({A})'], ['ceiling({A})'], ['floor({A})'], ['round({A}, 1)'], ['rounddown({A}, 0)'], ['roundup({A}, 0)'],
  ['int({A})'], ['int(-3.33)'], ['mod({A}, 3)'], ['power({B}, 2)'], ['sqrt({B})'], ['exp({B})'], ['log({B}, 2)'], ['lg({B})'], ['ln({B})'],
  ['sign({A})'], ['even({A})'], ['odd({A})'], ['average({A}, {B})'],
  ['counta({A}, {S}, {B})'], ['countall({A}, {S})'], ['countblank({A}, {S})'], ['countitems({Tags})'],
  // text
  ['concatenate({S}, "-", {Name})'], ['left({S}, 3)'], ['right({S}, 3)'], ['mid({S}, 2, 4)'], ['len({S})'],
  ['lower({S})'], ['upper({S})'], ['proper({S})'], ['trim(concatenate("  ", {S}, " "))'], ['find("l", {S})'], ['search("L", {S})'],
  ['substitute({S}, "l", "L")'], ['replace({S}, 1, 2, "XY")'], ['rept({Name}, 2)'], ['exact({S}, "hello wörld")'], ['t({S})'],
  ['text({A}, "0.00")'], ['value("12.5")'], ['regexmatch({S}, "l+")'], ['regexextract({S}, "[a-z]+")'],
  // date (TIME_ZONE Europe/Berlin: r1 and r2 sit on the daylight-saving changes)
  ['date(2024, {B}, 1)'], ['dateadd({D}, 2, "days")'], ['dateadd({D}, 1, "months")'], ['datedif({D}, "2025-01-01", "D")'],
  ['day({D})'], ['month({D})'], ['year({D})'], ['hour({D})'], ['minute({D})'], ['second({D})'], ['quarter({D})'], ['weekday({D})'],
  ['weeknum({D})'], ['isoweeknum({D})'], ['isodate({D})'], ['isomonth({D})'], ['startofweek({D})'], ['eomonth({D}, 1)'],
  ['networkdays({D}, "2025-01-31")'], ['workday({D}, 3)'], ['year(_ctime)', 'year(_ctime)'], ['hour({Created})'], ['weekday(_mtime)', 'weekday(_mtime)'],
  // logic
  ['if({A} > 0, "pos", "not")'], ['ifs({A} > 5, "big", {A} > 0, "small")'], ['switch({Name}, "r1", 1, "r2", 2, 0)'],
  ['isblank({S})'], ['if(isblank({D}), "none", "some")'],
];

/**
 * Functions of the library the SQL grammar cannot name as functions, and why: `and`, `or`, `xor`, `not`,
 * `true` and `false` are SQL keywords (write the operators AND, OR, NOT, TRUE, FALSE); `sum`, `max` and
 * `min` are SQL's aggregates (one argument, over rows); `now` and `today` are volatile (a formula column
 * holds the value of its last refresh, SQL the value at the query).
 */
const NOT_IN_SQL = ['and', 'or', 'xor', 'not', 'true', 'false', 'sum', 'max', 'min', 'now', 'today'];

const sqlOf = ([formula, sqlText]: [string, string?]) => sqlText ?? formula.replace(/\{(\w+)\}/g, '$1').replace(/"/g, "'");

describe.each(DIALECTS)('every formula function: formula column ≡ SQL (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const columnOf = new Map<string, string>();

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: 'Europe/Berlin' });
    g = await gateway(t);
    await addTable(g, 'Calc', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'A', column_type: 'number' },
      { column_name: 'B', column_type: 'number' },
      { column_name: 'S', column_type: 'text' },
      { column_name: 'D', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm' } },
      { column_name: 'Tags', column_type: 'multiple-select', column_data: { options: [{ name: 'x' }, { name: 'y' }] } },
    ]);
    await appendRows(g, 'Calc', ROWS);
    for (const [i, [formula]] of CASES.entries()) {
      const name = `F${i}`;
      const text = formula.replace('_ctime', '{Created}').replace('_mtime', '{Created}');
      if (text !== formula && !columnOf.has('Created')) {
        expect((await g.call('POST', 'columns/', { table_name: 'Calc', column_name: 'Created', column_type: 'ctime' })).statusCode).toBe(200);
        columnOf.set('Created', 'Created');
      }
      const res = await g.call('POST', 'columns/', { table_name: 'Calc', column_name: name, column_type: 'formula', column_data: { formula: text } });
      expect(res.statusCode, `${formula}: ${res.body}`).toBe(200);
      columnOf.set(formula, name);
    }
  }, 120_000);
  afterAll(() => t?.close());

  it('the table covers every function of the formula library', () => {
    const used = new Set(CASES.flatMap(([formula]) => [...formula.matchAll(/([a-z]+)\(/g)].map((m) => m[1]!)));
    const missing = [...FUNCTIONS.keys()].filter((name) => !used.has(name) && !NOT_IN_SQL.includes(name));
    expect(missing).toEqual([]);
  });

  it('folds case beyond ASCII the same on both engines, int() rounds down, and items are keyed as the original keys them', async () => {
    const res = await g.call('POST', 'sql/', { sql: "SELECT upper(S), lower(S), proper(S), int(A), int(-3.33) FROM Calc WHERE A < 0 AND lower(S) = 'élan straße' ORDER BY Name", convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results).toEqual([
      { _id: expect.any(String), 'UPPER(S)': 'ÉLAN STRASSE', 'LOWER(S)': 'élan straße', 'PROPER(S)': 'Élan Straße', 'INT(A)': -4, 'INT(-3.33)': -4 },
    ]);
    await addTable(g, 'Zahlen', [{ column_name: '数字', column_type: 'number' }]);
    await appendRows(g, 'Zahlen', [{ 数字: 1 }, { 数字: 2.5 }]);
    const sum = await g.call('POST', 'sql/', { sql: 'SELECT sum(数字), count(*), round(avg(数字), 1) FROM Zahlen', convert_keys: true });
    expect(sum.statusCode, sum.body).toBe(200);
    expect(sum.json().results).toEqual([{ 'SUM(数字)': 3.5, 'COUNT(*)': 2, 'ROUND(avg(数字), 1)': 1.8 }]);
  });

  it('applies LIMIT and OFFSET after the conditions the formula library evaluates; refuses them where SQL must compute them', async () => {
    const page = await g.call('POST', 'sql/', { sql: "SELECT Name FROM Calc WHERE Name <> 'r9' AND isblank(S) = false ORDER BY Name DESC LIMIT 1 OFFSET 1", convert_keys: true });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json().results.map((r: { Name: string }) => r.Name)).toEqual(['r2']);
    for (const condition of ['upper(S) IS NULL', "dateadd(D, 1, 'days') IS NULL", "upper(S) IS NULL AND dateadd(D, 1, 'days') IS NULL"]) {
      const empty = await g.call('POST', 'sql/', { sql: `SELECT Name FROM Calc WHERE ${condition} ORDER BY Name`, convert_keys: true });
      expect(empty.statusCode, empty.body).toBe(200);
      expect(empty.json().results.map((r: { Name: string }) => r.Name), condition).toEqual(['r4']);
    }
    const present = await g.call('POST', 'sql/', { sql: 'SELECT Name FROM Calc WHERE proper(S) IS NOT NULL ORDER BY Name', convert_keys: true });
    expect(present.json().results.map((r: { Name: string }) => r.Name)).toEqual(['r1', 'r2', 'r3']);
    const refused: Array<[string, RegExp]> = [
      ["UPDATE Calc SET A = 1 WHERE upper(S) = 'X'", /Function upper is not supported/],
      ['SELECT Name FROM Calc ORDER BY lower(S)', /ORDER BY cannot use functions computed by the formula engine/],
      ['SELECT upper(S), COUNT(*) FROM Calc GROUP BY S', /cannot be combined with GROUP BY/],
      ["SELECT Name FROM Calc WHERE upper(S) IN ('A')", /cannot be combined with function upper/],
    ];
    for (const [text, message] of refused) {
      const res = await g.call('POST', 'sql/', { sql: text });
      expect(res.statusCode, text).toBe(400);
      expect(JSON.stringify(res.json()), text).toMatch(message);
    }
  });

  it.each(CASES)('select %s', async (...testCase) => {
    const column = columnOf.get(testCase[0])!;
    const res = await g.call('POST', 'sql/', { sql: `SELECT Name, ${column}, ${sqlOf(testCase)} AS v FROM Calc ORDER BY Name`, convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    const results = res.json<{ results: Array<Record<string, unknown>> }>().results;
    expect(results.map((r) => r.v)).toEqual(results.map((r) => r[column] ?? null));
  });

  it.each(CASES)('where %s', async (...testCase) => {
    const column = columnOf.get(testCase[0])!;
    const all = (await g.call('POST', 'sql/', { sql: `SELECT Name, ${column} FROM Calc ORDER BY Name`, convert_keys: true })).json<{ results: Array<Record<string, unknown>> }>().results;
    const wanted = all.find((r) => typeof r[column] === 'number' || typeof r[column] === 'string')?.[column];
    if (wanted === undefined) return; // a date or boolean result: compared in the select list above
    const res = await g.call('POST', 'sql/', { sql: `SELECT Name FROM Calc WHERE ${sqlOf(testCase)} = ? ORDER BY Name`, parameters: [wanted], convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ results: Array<{ Name: string }> }>().results.map((r) => r.Name)).toEqual(all.filter((r) => r[column] === wanted).map((r) => r.Name));
  });
});
