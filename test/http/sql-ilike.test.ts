/**
 * ILIKE / NOT ILIKE in SQL: case-insensitive for A–Z on both engines (no other letter folds), the word
 * read only outside string literals and comments, mixed with LIKE in one statement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('SQL ILIKE (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Words', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'W', column_type: 'text' },
      { column_name: 'N', column_type: 'number' },
    ]);
    await appendRows(g, 'Words', [
      { Name: 'r1', W: 'Hello World' },
      { Name: 'r2', W: 'HELLO' },
      { Name: 'r3', W: 'hello' },
      { Name: 'r4', W: 'Élan' },
      { Name: 'r5', W: 'élan' },
      { Name: 'r6', W: 'x ILIKE y' },
      { Name: 'r7', N: 3 },
      { Name: 'r8', W: '50% OFF_' },
    ]);
  });
  afterAll(() => t.close());

  const names = async (where: string, parameters: unknown[] = []) => {
    const res = await g.call('POST', 'sql/', { sql: `SELECT Name FROM Words WHERE ${where} ORDER BY Name`, parameters, convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results.map((r: { Name: string }) => r.Name);
  };

  it.each<[string, unknown[], string[]]>([
    ["W ILIKE 'hello%'", [], ['r1', 'r2', 'r3']],
    ["W ilike 'HELLO'", [], ['r2', 'r3']],
    ['W ILIKE ?', ['%WORLD'], ['r1']],
    ["W ILIKE 'h_llo'", [], ['r2', 'r3']],
    ["W NOT ILIKE 'hello%'", [], ['r4', 'r5', 'r6', 'r7', 'r8']], // an empty cell is not like anything
    // Only A–Z fold: É and é stay different letters (on both engines).
    ["W ILIKE 'élan'", [], ['r5']],
    ["W ILIKE 'ÉLAN'", [], ['r4']],
    ["W ILIKE '%lAN'", [], ['r4', 'r5']],
    ["W ILIKE '50\\% off\\_'", [], ['r8']],
    ["W LIKE 'hello' OR W ILIKE 'hello world'", [], ['r1', 'r3']],
    ["W ILIKE 'HELLO' AND W LIKE 'H%'", [], ['r2']],
    ["W = 'x ILIKE y'", [], ['r6']],
    ["W LIKE 'x ILIKE%' /* ILIKE in a comment */", [], ['r6']],
    ["W ILIKE NULL", [], []],
  ])('%s', async (where, parameters, expected) => {
    expect(await names(where, parameters)).toEqual(expected);
  });

  it('refuses ILIKE over numbers and without a pattern, with a 400', async () => {
    for (const [text, message] of [
      ["SELECT Name FROM Words WHERE N ILIKE '3'", /ILIKE only supports text; N is number/],
      ['SELECT Name FROM Words WHERE W ILIKE Name', /ILIKE needs a text pattern/],
      ['SELECT Name FROM Words WHERE ILIKE', /SQL syntax error/],
    ] as const) {
      const res = await g.call('POST', 'sql/', { sql: text });
      expect(res.statusCode, text).toBe(400);
      expect(JSON.stringify(res.json()), text).toMatch(message);
    }
  });
});
