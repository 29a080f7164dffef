import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';
import { sqlCalls } from './row-index.fixtures.js';

/**
 * SQL grouped statements over one column answered from its row index (sql/indexed-groups.ts): the same
 * results as the scan of every row, with empty cells, values stored with another JSON type than the
 * column's (checkbox values, arrays and objects, numbers in a text column, texts from `[` and `{`, which the
 * index's value alone does not tell apart), code-point text order and ILIKE's A–Z folding. On SQLite the plan
 * reads the index; on PostgreSQL (no index-only read of an expression) the statement keeps the scan, and
 * the answers are compared all the same. "Big" is lowered to 100 rows here; the table has 300.
 */
describe.each(DIALECTS)('SQL grouped statements from a row index (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  /** Rows whose Price is a JSON number. */
  let numbers = 0;

  const STATEMENTS = [
    'SELECT Price, COUNT(*) FROM G GROUP BY Price',
    'SELECT Price, COUNT(Price), MIN(Price), MAX(Price), SUM(Price) FROM G GROUP BY Price ORDER BY COUNT(*) DESC, Price',
    'SELECT COUNT(*), COUNT(Price), COUNT(DISTINCT Price), MIN(Price), MAX(Price), SUM(Price), AVG(Price) FROM G',
    'SELECT COUNT(*) FROM G WHERE Price >= 1',
    'SELECT Price, COUNT(*) FROM G WHERE Price < 100 OR Price IS NULL GROUP BY Price HAVING COUNT(*) > 1',
    'SELECT DISTINCT Price FROM G ORDER BY Price DESC LIMIT 7',
    'SELECT Name, COUNT(*) FROM G GROUP BY Name',
    'SELECT Name, COUNT(*) AS n FROM G GROUP BY Name ORDER BY n DESC, Name LIMIT 5',
    'SELECT MIN(Name), MAX(Name), COUNT(Name), COUNT(DISTINCT Name) FROM G',
    "SELECT Name, COUNT(*) FROM G WHERE Name ILIKE 'a%' GROUP BY Name",
    "SELECT COUNT(*) FROM G WHERE Name = 'a' OR Name = '[x'",
    "SELECT Name, COUNT(*) FROM G WHERE Name > 'Z' GROUP BY Name",
    'SELECT Kind, COUNT(*) FROM G GROUP BY Kind',
    'SELECT Kind, COUNT(*) FROM G GROUP BY Kind ORDER BY Kind DESC',
    'SELECT DISTINCT Kind FROM G',
    'SELECT Due, COUNT(*) FROM G GROUP BY Due',
    'SELECT MIN(Due), MAX(Due), COUNT(Due) FROM G',
    "SELECT Due, COUNT(*) FROM G WHERE Due >= '2026-03-01' GROUP BY Due",
    // Two columns: not answered from one index (the scan either way).
    'SELECT Kind, COUNT(*), SUM(Price) FROM G GROUP BY Kind',
  ];

  const { run, explain, indexes } = sqlCalls(() => ({ t, g }));

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    const table = await addTable(g, 'G', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Price', column_type: 'number' },
      { column_name: 'Kind', column_type: 'single-select' },
      { column_name: 'Due', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm' } },
    ]);
    tableId = table._id;
    const names = ['a', 'A', 'b', 'Zebra', 'zebra', 'Ä', 'ä', 'apple', 'Apple', '[x', '{y', '\\', '|'];
    const kinds = ['Open', 'Closed', 'Waiting'];
    const ids = await appendRows(
      g,
      'G',
      Array.from({ length: 300 }, (_, i) => {
        const row: Record<string, unknown> = {};
        if (i % 9 !== 0) row.Name = names[i % names.length];
        if (i % 7 !== 0) row.Price = [0, 1, 2, 2.5, -3, 1000, 99.75][i % 7];
        if (i % 5 !== 0) row.Kind = kinds[i % 3];
        if (i % 4 !== 0) row.Due = `2026-0${1 + (i % 5)}-0${1 + (i % 3)}${i % 2 ? ' 10:30' : ''}`;
        return row;
      }),
    );
    // Cells no write of these column types stores, written straight into storage: what a retyped column or
    // an older version may leave behind. Each row gets one odd value per column.
    const key = (name: string) => table.columns.find((c) => c.name === name)!.key;
    const odd: Array<Record<string, unknown>> = [
      { Price: true, Name: ['a', 'b'], Kind: '', Due: 1 },
      { Price: false, Name: { a: 1 }, Kind: 'Unknown', Due: true },
      { Price: '12', Name: 5, Kind: ['Open'], Due: ['2026-01-01'] },
      { Price: [1], Name: true, Kind: 3, Due: '[2026' },
      { Price: { v: 1 }, Name: false, Kind: null, Due: { d: '2026-01-01' } },
      { Price: '', Name: 0, Due: '' },
      { Price: null, Name: 1, Due: '2026-01-01' },
      { Price: 1e15, Name: '', Due: '2026-01-01 00:00' },
      { Price: 0.1, Name: '[', Due: '{' },
      { Price: '1', Name: '{', Due: 'later' },
      { Price: true, Name: [], Due: [] },
      { Price: false, Name: {}, Due: {} },
    ];
    const oddRows = new Set(odd.map((_, i) => i * 20));
    numbers = Array.from({ length: 300 }, (_, i) => i).filter((i) => i % 7 !== 0 && !oddRows.has(i)).length + 2;
    for (const [i, cells] of odd.entries()) {
      const data = JSON.stringify(Object.fromEntries(Object.entries(cells).map(([name, value]) => [key(name), value])));
      await t.container.db
        .updateTable('base_rows')
        .set({ data: dialect === 'postgres' ? sql`cast(${data} as jsonb)` : data } as never)
        .where('base_id', '=', g.base.id)
        .where('row_id', '=', ids[i * 20]!)
        .execute();
    }
    if (dialect === 'sqlite') {
      // A real 1.0 and 0.0 (JSON text keeps them; JSON.stringify would write 1 and 0).
      await sql`update base_rows set data = json_set(data, ${`$."${key('Price')}"`}, json('1.0')) where base_id = ${g.base.id} and row_id = ${ids[1]!}`.execute(t.container.db);
      await sql`update base_rows set data = json_set(data, ${`$."${key('Price')}"`}, json('0.0')) where base_id = ${g.base.id} and row_id = ${ids[2]!}`.execute(t.container.db);
    }
  });
  afterAll(() => t.close());

  it('answers as the scan does, and SQLite reads the column’s index', async () => {
    indexes().options.minRows = 1000;
    const before = [];
    for (const statement of STATEMENTS) before.push(await run(statement));
    expect(await indexes().indexesOf(g.base.id, tableId)).toEqual([]);
    // The odd values count as the scan reads them (a checkbox value is no number; an array no text).
    expect((before[2] as Array<Record<string, unknown>>)[0]!['COUNT(Price)']).toBe(numbers);

    indexes().options.minRows = 100;
    indexes().options.recountMs = 0;
    for (const statement of STATEMENTS) await run(statement);
    await indexes().idle();
    const indexed = (await indexes().indexesOf(g.base.id, tableId)).length;
    expect(indexed).toBe(dialect === 'sqlite' ? 4 : 3);

    const after = [];
    for (const statement of STATEMENTS) after.push(await run(statement));
    for (const [i, statement] of STATEMENTS.entries()) expect(after[i], statement).toEqual(before[i]);

    if (dialect === 'sqlite') {
      const plan = await explain('SELECT Name, COUNT(*) FROM G GROUP BY Name');
      // The index alone for most rows, and the index's ranges of ambiguous values for the rest.
      expect(plan).toMatch(/UNION ALL/);
      expect(plan).toMatch(/SCAN base_rows USING INDEX bri_/);
      expect(plan).toMatch(/SEARCH base_rows USING INDEX bri_\S+ \(<expr>>\? AND <expr><\?\)/);
      expect(await explain('SELECT Kind, COUNT(*), SUM(Price) FROM G GROUP BY Kind')).not.toMatch(/UNION ALL/);
    }
  });

  it('reads the rows when the index is gone before the registry knows', async () => {
    if (dialect !== 'sqlite') return;
    const statement = 'SELECT Price, COUNT(*) FROM G GROUP BY Price';
    const expected = await run(statement);
    const price = await priceKey();
    const [entry] = (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.column_key === price);
    expect(entry).toBeDefined();
    await sql.raw(`drop index "${entry!.name}"`).execute(t.container.db);
    expect(await run(statement)).toEqual(expected);
  });

  const priceKey = async () => {
    const columns = (await g.call('GET', 'columns/?table_name=G')).json<{ columns: Array<{ key: string; name: string }> }>().columns;
    return columns.find((c) => c.name === 'Price')!.key;
  };
});
