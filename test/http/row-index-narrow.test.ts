import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { type Gateway } from './rows.fixtures.js';
import { bigTable } from './row-index.fixtures.js';

/**
 * An unsorted page of a filter that narrows a big table (rows/rows.repository.ts `listRowTextsAfter`'s
 * `narrowing`): on SQLite the ids the filter's term matches come from its row index alone and only the
 * page's rows are opened, in id order. The answers must be the offsets' (archived rows left out, numbers
 * stored as text not matched, every page of a skip), and stay so when the index is gone under the read.
 */
/** The suite's table: "Big" of bigTable, archived rows and three later listed rows the range matches, the filter's index built. */
function narrowSuite(dialect: (typeof DIALECTS)[number]) {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  let expected: string[];
  const PRICE_OVER_900 = [{ column_name: 'Price', filter_predicate: 'greater', filter_term: 900 }];

  const page = async (query: string) => {
    t.container.baseData.snapshots.evict(g.base.id);
    const res = await g.call('POST', `filtered-rows/?table_name=Big&convert_keys=true${query}`, { filters: PRICE_OVER_900 });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<Record<string, unknown>> }>().rows.map((r) => r.Name as string);
  };
  const explain = () => t.container.baseData.rows.explainList({ id: g.base.id, uuid: g.base.uuid }, { table_name: 'Big', limit: 10 }, {}, { filters: PRICE_OVER_900 });
  const indexes = () => t.container.baseData.indexes;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const big = await bigTable(t);
    ({ g, tableId } = big);
    // Archived rows the range matches, between the table's rows and three later listed ones it matches too.
    const archived = await g.call('POST', 'add-archived-rows/', { table_name: 'Big', rows: [950, 951, 952, 953, 954].map((p) => ({ Name: `archived ${p}`, Price: p })) });
    expect(archived.statusCode, archived.body).toBe(200);
    const late = await g.call('POST', 'rows/', { table_name: 'Big', rows: [960, 961, 962].map((p) => ({ Name: `late ${p}`, Price: p })) });
    expect(late.statusCode, late.body).toBe(200);
    expected = [...big.rows.filter((r) => typeof r.Price === 'number' && r.Price > 900).map((r) => r.Name as string), 'late 960', 'late 961', 'late 962'];
    expect(expected.length).toBeGreaterThan(20);
    // "Big" lowered to 100 rows: the filter's index is built on its first use.
    indexes().options.minRows = 100;
    indexes().options.recountMs = 0;
    await page('');
    await indexes().idle();
  });
  afterAll(() => t.close());
  // Read in the tests, after beforeAll has set them.
  return { app: () => t, gateway: () => g, table: () => tableId, answers: () => expected, page, explain, indexes };
}

describe.each(DIALECTS)('a narrow filter read through its row index (%s)', (dialect) => {
  const { answers, page } = narrowSuite(dialect);

  it('answers every page as the offsets do, archived rows left out', async () => {
    const expected = answers();
    expect(await page('')).toEqual(expected);
    for (const [start, limit] of [[0, 5], [5, 5], [10, 7], [17, 100], [expected.length - 2, 10], [expected.length, 10]] as const) {
      expect(await page(`&start=${start}&limit=${limit}`), `start ${start}, limit ${limit}`).toEqual(expected.slice(start, start + limit));
    }
  });
});

describe.each(DIALECTS.filter((d) => d === 'sqlite'))('a narrow filter read through its row index, the plan (%s)', (dialect) => {
  const { app, gateway, table, answers, page, explain, indexes } = narrowSuite(dialect);

  it('takes the ids from the index alone and opens only the rows of the page, in id order (SQLite)', async () => {
    const plan = await explain();
    expect(plan).toMatch(new RegExp(`USING INDEX bri_${gateway().base.id}_`));
    expect(plan).toMatch(/LIST SUBQUERY/);
    expect(plan).toMatch(/INTEGER PRIMARY KEY/);
    // No sort of the matching rows: they are read in the order of the ids' list.
    expect(plan).not.toMatch(/TEMP B-TREE FOR ORDER BY/);
  });

  it('answers the same when the index is gone under the read (SQLite)', async () => {
    const names = (await indexes().indexesOf(gateway().base.id, table())).map((e) => e.name);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) await sql`drop index if exists ${sql.id(name)}`.execute(app().container.db);
    expect(await page('&start=3&limit=6')).toEqual(answers().slice(3, 9));
    expect(await page('')).toEqual(answers());
  });
});
