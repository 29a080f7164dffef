import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { type Gateway } from './rows.fixtures.js';
import { bigTable, sqlCalls } from './row-index.fixtures.js';

/**
 * The SQL endpoint and the row indexes (rows/row-indexes.ts, docs/sql.md "Row indexes"): the same results
 * with and without the indexes its WHERE terms cause, and on SQLite the plan names the index
 * (`INDEXED BY` after the probe). "Big" is lowered to 100 rows here; the table has 300.
 */
describe.each(DIALECTS)('SQL with row indexes (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;

  const STATEMENTS = [
    'SELECT * FROM Big WHERE Price > 900',
    'SELECT Name, Price FROM Big WHERE Price >= 100 AND Price < 300 ORDER BY Name DESC LIMIT 20',
    'SELECT Name FROM Big WHERE 950 <= Price',
    "SELECT Name FROM Big WHERE Kind = 'Waiting' LIMIT 10, 5",
    "SELECT Name, Kind FROM Big WHERE Name = 'item 007'",
    "SELECT Name FROM Big WHERE Name > 'item 290' AND Price > 10",
    'SELECT Kind, COUNT(*), SUM(Price) FROM Big WHERE Price < 500 GROUP BY Kind',
    "SELECT Name FROM Big WHERE Price > 990 OR Kind = 'Open' LIMIT 30",
    'SELECT Name FROM Big WHERE Price = 74',
  ];

  const { run, explain, indexes } = sqlCalls(() => ({ t, g }));

  beforeAll(async () => {
    t = await createTestApp(dialect);
    ({ g, tableId } = await bigTable(t));
  });
  afterAll(() => t.close());

  it('answers the same with the indexes its terms cause as without, and SQLite reads them', async () => {
    indexes().options.minRows = 1000;
    const before = [];
    for (const statement of STATEMENTS) before.push(await run(statement));
    expect(before[0]!.length).toBeGreaterThan(0);
    expect(await indexes().indexesOf(g.base.id, tableId)).toEqual([]);

    indexes().options.minRows = 100;
    indexes().options.recountMs = 0;
    for (const statement of STATEMENTS) await run(statement);
    await indexes().idle();
    const columns = (await g.call('GET', 'columns/?table_name=Big')).json<{ columns: Array<{ key: string; name: string }> }>().columns;
    const keyOf = (name: string) => columns.find((c) => c.name === name)!.key;
    const indexed = (await indexes().indexesOf(g.base.id, tableId)).map((e) => e.column_key).sort();
    expect(indexed).toEqual([keyOf('Name'), keyOf('Price'), keyOf('Kind')].sort());

    const after = [];
    for (const statement of STATEMENTS) after.push(await run(statement));
    expect(after).toEqual(before);

    const prefix = new RegExp(`bri_${g.base.id}_`);
    if (dialect === 'sqlite') {
      // The probe finds these terms narrow (fewer rows than its cap): INDEXED BY their index.
      expect(await explain('SELECT * FROM Big WHERE Price > 900')).toMatch(prefix);
      expect(await explain("SELECT Name FROM Big WHERE Kind = 'Waiting' LIMIT 10, 5")).toMatch(prefix);
      expect(await explain('SELECT Kind, COUNT(*) FROM Big WHERE Price < 500 GROUP BY Kind')).toMatch(prefix);
      // An OR is no indexable term: no hint, and the statement still runs.
      expect(await explain("SELECT Name FROM Big WHERE Price > 990 OR Kind = 'Open'")).not.toMatch(/INDEXED BY/i);
    } else {
      // Terms matching many rows (the probe's cap lowered): read in id order, nothing sorted.
      indexes().options.probeCap = 20;
      try {
        expect(await explain("SELECT Name FROM Big WHERE Kind = 'Waiting' LIMIT 10")).not.toMatch(/Sort/);
        const again = [];
        for (const statement of STATEMENTS) again.push(await run(statement));
        expect(again).toEqual(before);
      } finally {
        indexes().options.probeCap = 2000;
      }
    }
  });
});
