import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { DEFAULT_ROW_INDEX_OPTIONS, RowIndexes } from '../../src/modules/rows/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';
import { sqlCalls } from './row-index.fixtures.js';

/**
 * Trigram indexes for `contains` filters (rows/search-index.ts): built for a big table once a listing
 * searches it ("big" is lowered to 100 rows; the table has 330), they narrow the rows read to those whose
 * text holds the term's trigrams, and every answer is the one read without them — case folding, LIKE's
 * wildcards, terms only in another cell or in a column key, non-ASCII and short terms, pages, sorts and
 * exports; writes after the build are seen; the index goes with its table.
 */
describe.each(DIALECTS)('search indexes for contains filters (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  const indexes = () => t.container.baseData.indexes;
  const rows = () => t.container.baseData.rows;
  const searched = () => rows().searchedPages;
  const evict = () => t.container.baseData.snapshots.evict(g.base.id);

  const list = async (filters: unknown[], query = '', conjunction = 'And') => {
    evict();
    const res = await g.call('POST', `filtered-rows/?table_name=Notes&convert_keys=true${query}`, { filters, filter_conjunction: conjunction });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<Record<string, unknown>> }>().rows.map((r) => r.Title as string);
  };
  const contains = (column: string, term: string) => ({ column_name: column, filter_predicate: 'contains', filter_term: term });
  /** A listing's answer with the index off (every table "small") and on. */
  const bothWays = async (filters: unknown[], query = '', conjunction = 'And') => {
    indexes().options.searchReads = false;
    const without = await list(filters, query, conjunction);
    indexes().options.searchReads = true;
    const before = searched();
    const withIndex = await list(filters, query, conjunction);
    return { without, withIndex, searched: searched() - before };
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    const table = await addTable(g, 'Notes', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Body', column_type: 'text' },
      { column_name: 'Size', column_type: 'number' },
    ]);
    tableId = table._id as string;
    const words = ['Zebra Stripe', 'zebra-crossing', 'ZEBRA', '50%_off sale', '50% off', 'a_b', 'say "hi"', 'back\\slash', 'Café Ünïcode', 'plain'];
    const titles = Array.from({ length: 330 }, (_, i) => ({
      Title: `t${String(i).padStart(3, '0')} ${words[i % words.length]}${i % 97 === 0 ? ' needle-rare' : ''}`,
      Body: i % 13 === 0 ? 'only the body has needle-rare and zebra' : `body ${i}`,
      ...(i % 4 === 0 ? {} : { Size: i }),
    }));
    await appendRows(g, 'Notes', titles);
    indexes().options.minRows = 100;
    // The first search of the table builds its index.
    await list([contains('Title', 'needle')]);
    await indexes().idle();
    // No more row indexes: a sort index built meanwhile would read sorted pages instead of the search index.
    indexes().options.maxIndexes = indexes().count();
    // Every term counts as rare in this small table (the test below restores the defaults).
    indexes().options.searchRowCost = 0;
  });
  afterAll(() => t.close());

  it('builds one trigram index for the table once it is searched', async () => {
    const entries = (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.kind === 'search');
    expect(entries.map((e) => e.name)).toEqual([RowIndexes.searchName(g.base.id, tableId)]);
    expect(indexes().searchIndex(g.base.id, tableId)).toBe(entries[0]!.name);
  });

  const CASES: Array<[string, unknown[], string, string?]> = [
    ['a rare term', [contains('Title', 'needle-rare')], ''],
    ['a term in another case', [contains('Title', 'zEbRa')], '&limit=50'],
    ['a term with a space', [contains('Title', 'zebra str')], ''],
    ["LIKE's wildcards as text", [contains('Title', '50%_')], ''],
    ['a percent sign with more', [contains('Title', '% off')], ''],
    ['an underscore', [contains('Title', 'a_b')], ''],
    ['a term only the other cell holds', [contains('Title', 'only the body')], ''],
    ['a term that is a column key', [contains('Title', '0000')], ''],
    ['a term nothing holds', [contains('Title', 'nowhere-at-all')], ''],
    ['two terms', [contains('Title', 'zebra'), contains('Title', 'stripe')], ''],
    ['a term and a number range', [contains('Title', 'zebra'), { column_name: 'Size', filter_predicate: 'greater', filter_term: 100 }], ''],
    ['a later page', [contains('Title', 'zebra')], '&start=40&limit=20'],
    ['a sort', [contains('Title', 'zebra')], '&order_by=Size&direction=desc&limit=30'],
    ['a deep sorted page', [contains('Title', 'zebra')], '&order_by=Size&start=50&limit=25'],
  ];
  it.each(CASES)('%s: the same rows through the index as without it', async (name, filters, query) => {
    const { without, withIndex, searched: pages } = await bothWays(filters, query);
    expect(withIndex).toEqual(without);
    expect(pages).toBeGreaterThan(0);
    expect(without.length === 0).toBe(name === 'a term nothing holds' || name === 'a term only the other cell holds' || name === 'a term that is a column key');
  });

  const UNSEARCHED: Array<[string, unknown[], string]> = [
    ['a short term', [contains('Title', 'ze')], 'And'],
    ['a term with a quote', [contains('Title', 'say "hi')], 'And'],
    ['a term with a backslash', [contains('Title', 'back\\sl')], 'And'],
    ['a non-ASCII term', [contains('Title', 'Café')], 'And'],
    ['terms under OR', [contains('Title', 'zebra'), contains('Title', 'plain')], 'Or'],
    ['does not contain', [{ column_name: 'Title', filter_predicate: 'does_not_contain', filter_term: 'zebra' }], 'And'],
  ];
  it.each(UNSEARCHED)('%s: read without the index, answered alike', async (_name, filters, conjunction) => {
    const { without, withIndex, searched: pages } = await bothWays(filters, '&limit=200', conjunction);
    expect(withIndex).toEqual(without);
    expect(without.length).toBeGreaterThan(0);
    expect(pages).toBe(0);
  });

  it('reads a page of a term many rows hold in id order, with the same answer; a sort of it through the index', async () => {
    // SQLite: 50 rows or more in the index; PostgreSQL: by the planner's estimates, with the default cost, in 330 rows.
    indexes().options.searchCap = 50;
    indexes().options.searchRowCost = DEFAULT_ROW_INDEX_OPTIONS.searchRowCost;
    try {
      // "zebra": 99 titles and 26 bodies hold it; "needle-rare": 4 titles and 26 bodies.
      const common = await bothWays([contains('Title', 'zebra')], '&limit=200');
      expect(common.withIndex).toEqual(common.without);
      expect(common.without.length).toBe(99);
      expect(common.searched).toBe(0);
      const rare = await bothWays([contains('Title', 'needle-rare')]);
      expect(rare.withIndex).toEqual(rare.without);
      expect(rare.searched).toBe(1);
      // A sort reads every match: through the index whatever their number.
      const sorted = await bothWays([contains('Title', 'zebra')], '&order_by=Size&limit=200');
      expect(sorted.withIndex).toEqual(sorted.without);
      expect(sorted.searched).toBe(1);
    } finally {
      indexes().options.searchCap = 20_000;
      indexes().options.searchRowCost = 0;
    }
  });

  const { run, explain } = sqlCalls(() => ({ t, g }));
  /** A plan reading the trigram index (SQLite) or testing the row's lowered text, which the index answers (PostgreSQL). */
  const THROUGH_INDEX = dialect === 'sqlite' ? /VIRTUAL TABLE/ : /lower\(\(\(data\)::text\)::text\) ~~/;
  const SQL_CASES: Array<[string, string, boolean]> = [
    ['LIKE, case kept', "SELECT Title FROM Notes WHERE Title LIKE '%Zebra St%' ORDER BY Title", true],
    ['LIKE with no match in that case', "SELECT Title FROM Notes WHERE Title LIKE '%zebra st%'", false],
    ['ILIKE', "SELECT Title, Size FROM Notes WHERE Title ILIKE '%zebra%' AND Size > 100 LIMIT 40", true],
    ['wildcards and an escape', "SELECT Title FROM Notes WHERE Title LIKE '%50\\%_off%'", true],
    ['an underscore as any character', "SELECT Title FROM Notes WHERE Title LIKE '%Zebra_Str%' LIMIT 500", true],
    ['a term only the other cell holds', "SELECT Title FROM Notes WHERE Title LIKE '%only the body%'", false],
    ['a count', "SELECT COUNT(*) AS n FROM Notes WHERE Title LIKE '%needle-rare%'", true],
    ['a group', "SELECT Size, COUNT(*) AS n FROM Notes WHERE Title ILIKE '%ZEBRA%' GROUP BY Size ORDER BY Size LIMIT 500", true],
  ];
  it.each(SQL_CASES)('SQL %s: the same results through the index as without it', async (_name, statement, some) => {
    indexes().options.searchReads = false;
    const without = await run(statement);
    indexes().options.searchReads = true;
    const withIndex = await run(statement);
    expect(withIndex).toEqual(without);
    expect(without.length > 0 && JSON.stringify(without) !== '[{"n":0}]').toBe(some);
    expect(await explain(statement)).toMatch(THROUGH_INDEX);
  });

  it('SQL: a LIKE with no run of 3 characters, or on a column of another type, reads as before', async () => {
    for (const statement of ["SELECT Title FROM Notes WHERE Title LIKE '%ze%'", "SELECT Title FROM Notes WHERE Size LIKE '%123%'", "SELECT Title FROM Notes WHERE Title NOT LIKE '%zebra%'"]) {
      indexes().options.searchReads = false;
      const without = await run(statement).catch((error: Error) => error.message);
      indexes().options.searchReads = true;
      expect(await run(statement).catch((error: Error) => error.message)).toEqual(without);
      if (typeof without !== 'string') expect(await explain(statement)).not.toMatch(THROUGH_INDEX);
    }
  });

  it('sees rows added, changed and deleted after the build', async () => {
    const term = [contains('Title', 'quokka')];
    expect(await list(term)).toEqual([]);
    const [added] = await appendRows(g, 'Notes', [{ Title: 'a new Quokka', Size: 5 }]);
    expect(await list(term)).toEqual(['a new Quokka']);
    const first = (await g.call('GET', 'rows/?table_name=Notes&convert_keys=true&limit=1')).json<{ rows: Array<{ _id: string }> }>().rows[0]!;
    expect((await g.call('PUT', 'rows/', { table_name: 'Notes', updates: [{ row_id: first._id, row: { Title: 'now a QUOKKA too' } }] })).statusCode).toBe(200);
    expect(await list(term)).toEqual(['now a QUOKKA too', 'a new Quokka']);
    expect((await g.call('DELETE', 'rows/', { table_name: 'Notes', row_ids: [added] })).statusCode).toBe(200);
    expect(await list(term)).toEqual(['now a QUOKKA too']);
    // The changed row no longer holds the term it had.
    const { without, withIndex } = await bothWays([contains('Title', 't000 zebra')]);
    expect(withIndex).toEqual(without);
    expect(withIndex).toEqual([]);
  });

  /** A view of the titles holding "zebra" (`sorts`: its sort), exported without the index and with it: both exports and the pages read through it. */
  const exportBothWays = async (name: string, sorts?: unknown[]) => {
    const view = await g.call('POST', 'views/?table_name=Notes', { name, filters: [contains('Title', 'zebra')], ...(sorts ? { sorts } : {}) });
    expect(view.statusCode, view.body).toBe(200);
    const scan = async () => {
      const names: string[] = [];
      for await (const page of rows().scan({ id: g.base.id, uuid: g.base.uuid }, { table_name: 'Notes', view_name: name, convert_keys: true }, {}, 7)) names.push(...page.map((r) => r.Title as string));
      return names;
    };
    indexes().options.searchReads = false;
    const without = await scan();
    indexes().options.searchReads = true;
    const before = searched();
    const withIndex = await scan();
    return { without, withIndex, searched: searched() - before };
  };

  it("exports a searched view's rows through the index, as without it, unsorted and sorted", async () => {
    const unsorted = await exportBothWays('Zebras');
    expect(unsorted.withIndex).toEqual(unsorted.without);
    expect(unsorted.without.length).toBeGreaterThan(90);
    expect(unsorted.without.every((title) => /zebra/i.test(title))).toBe(true);
    expect(unsorted.searched).toBeGreaterThan(0);
    // Sorted: every match's id read once, through the index.
    const sorted = await exportBothWays('Zebras by size', [{ column_key: 'Size', sort_type: 'down' }]);
    expect(sorted.withIndex).toEqual(sorted.without);
    expect(sorted.without.length).toBe(unsorted.without.length);
    expect(sorted.withIndex).not.toEqual(unsorted.withIndex);
    expect(sorted.searched).toBeGreaterThan(0);
  });

  it("is read by the plan of a searched listing (SQLite: the FTS5 table; PostgreSQL: the index answers the listing's LIKE)", async () => {
    const plan = await rows().explainList({ id: g.base.id, uuid: g.base.uuid }, { table_name: 'Notes' }, {}, { filters: [contains('Title', 'needle-rare')] });
    if (dialect === 'sqlite') {
      expect(plan).toMatch(/VIRTUAL TABLE/);
      return;
    }
    // 330 rows are read fastest without it: with the other ways off and the LIKE dear, the planner shows the index fits the condition.
    expect(plan).toMatch(/~~/);
    const name = RowIndexes.searchName(g.base.id, tableId);
    const forced = await t.container.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`set local enable_indexscan = off`.execute(trx);
      // The LIKE costly per row (it is, on a row's whole text), so it is pushed into an index if one fits.
      await sql`set local cpu_operator_cost = 100`.execute(trx);
      const { rows: lines } = await sql<{ 'QUERY PLAN': string }>`explain select id from base_rows where base_id = ${sql.lit(g.base.id)} and table_id = ${sql.lit(tableId)} and lower((base_rows.data)::text collate "C") like ${'%needle-rare%'}::text`.execute(trx);
      return lines.map((l) => l['QUERY PLAN']).join('\n');
    });
    expect(forced, forced).toContain(name);
  });

  it('is dropped with its table, and with it its triggers (SQLite) or index (PostgreSQL)', async () => {
    const name = RowIndexes.searchName(g.base.id, tableId);
    const exists = async () =>
      dialect === 'sqlite'
        ? (await sql<{ n: number }>`select count(*) as n from sqlite_master where name like ${`${name}%`}`.execute(t.container.db)).rows[0]!.n
        : Number((await sql<{ n: string }>`select count(*) as n from pg_indexes where indexname = ${name}`.execute(t.container.db)).rows[0]!.n);
    expect(await exists()).toBeGreaterThan(0);
    // A column renamed keeps it.
    expect((await g.call('PUT', 'columns/', { table_name: 'Notes', column: 'Body', op_type: 'rename_column', new_column_name: 'Text' })).statusCode).toBe(200);
    await indexes().idle();
    expect(indexes().searchIndex(g.base.id, tableId)).toBe(name);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Notes' })).statusCode).toBe(200);
    await indexes().idle();
    expect(indexes().searchIndex(g.base.id, tableId)).toBeUndefined();
    expect(await exists()).toBe(0);
  });
});
