import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appendRows, appWithTiedTable, tiedRows, type Gateway } from './rows.fixtures.js';

/**
 * Cold jumps deep into listings filtered on several columns or sorted on several (issue 34): a jump index
 * of several (SQLite, row-indexes.ts `noteJumpMany`) or a jump set of several (PostgreSQL, jump-sets.ts
 * `many`) carries every filter column's cell and the full sort key, so the rows before a deep `start` are
 * skipped as index entries. Every cold page answers what the same listing answers with the jump
 * structures unused (`jumpReads` off): AND and OR filters on 2–3 columns, 2–3 sorts (ties, empty cells,
 * descending, text by code point), archived rows mixed in; after writes; after a rename, a type change
 * and a deleted column. "Big" is lowered to 100 rows here.
 */
describe.each(DIALECTS)('cold deep jumps into listings on several columns (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  const LISTED = 140;

  beforeAll(async () => {
    ({ t, g } = await appWithTiedTable(dialect, [{ column_name: 'M', column_type: 'number' }]));
    const rows = tiedRows(LISTED).map((r, i) => ({ ...r, ...(i % 7 === 3 ? {} : { M: i % 4 }) }));
    for (let i = 0; i < LISTED; i += 10) {
      await appendRows(g, 'T', rows.slice(i, i + 10));
      // Archived rows among the listed ones, some with equal sort values, some matching the filters.
      const archived = tiedRows(13).slice(i % 13, (i % 13) + 3).map((r, j) => ({ ...r, M: j % 4, Name: `archived ${i}.${j}` }));
      const res = await g.call('POST', 'add-archived-rows/', { table_name: 'T', rows: archived });
      expect(res.statusCode, res.body).toBe(200);
    }
    const views: Record<string, object> = {
      'Two sorts': { sorts: [{ column_key: 'Label', sort_type: 'down' }, { column_key: 'N', sort_type: 'up' }] },
      'Three sorts': { sorts: [{ column_key: 'N', sort_type: 'down' }, { column_key: 'M', sort_type: 'up' }, { column_key: 'Label', sort_type: 'down' }] },
      'Three filters': {
        filters: [
          { column_name: 'N', filter_predicate: 'greater_or_equal', filter_term: 0 },
          { column_name: 'Label', filter_predicate: 'is_not', filter_term: 'Z' },
          { column_name: 'M', filter_predicate: 'less', filter_term: 3 },
        ],
        sorts: [{ column_key: 'Label', sort_type: 'up' }, { column_key: 'M', sort_type: 'down' }],
      },
      'Or filters': {
        filters: [
          { column_name: 'Label', filter_predicate: 'is', filter_term: 'a' },
          { column_name: 'M', filter_predicate: 'equal', filter_term: 1 },
        ],
        filter_conjunction: 'Or',
      },
    };
    for (const [name, body] of Object.entries(views)) {
      expect((await g.call('POST', 'views/?table_name=T', { name })).statusCode).toBe(200);
      const res = await g.call('PUT', `views/${name}/?table_name=T`, body);
      expect(res.statusCode, res.body).toBe(200);
    }
    const meta = (await g.call('GET', 'metadata/')).json<{ metadata: { tables: Array<{ _id: string; name: string }> } }>();
    tableId = meta.metadata.tables.find((x) => x.name === 'T')!._id;
  }, 180_000);
  afterAll(() => t.close());

  const indexes = () => t.container.baseData.indexes;
  const twoAnd = { filters: [{ column_name: 'N', filter_predicate: 'greater', filter_term: 0 }, { column_name: 'Label', filter_predicate: 'is_not_empty' }] };
  const twoOr = {
    filters: [{ column_name: 'Label', filter_predicate: 'is', filter_term: 'B' }, { column_name: 'N', filter_predicate: 'equal', filter_term: 4 }, { column_name: 'M', filter_predicate: 'is_empty' }],
    filter_conjunction: 'Or',
  };
  /** Listings: a query string and a filtered-rows/ body or none. */
  const LISTINGS: Array<[string, object | undefined]> = [
    ['view_name=Two sorts', undefined],
    ['view_name=Three sorts', undefined],
    ['view_name=Three filters', undefined],
    ['view_name=Or filters', undefined],
    ['', twoAnd],
    ['order_by=N&direction=desc', twoOr],
    ['view_name=Two sorts', twoAnd],
  ];
  const page = async (query: string, filter: object | undefined, start: number, limit: number, jumpReads: boolean) => {
    indexes().options.jumpReads = jumpReads;
    t.container.baseData.snapshots.evict(g.base.id);
    t.container.baseData.rows.positions.clear();
    const path = `${filter ? 'filtered-rows' : 'rows'}/?table_name=T&convert_keys=true&${query}&start=${start}&limit=${limit}`;
    const res = filter ? await g.call('POST', path, filter) : await g.call('GET', path);
    indexes().options.jumpReads = true;
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name);
  };
  /** Every listing's cold pages with and without its jump structure. */
  const compare = async (what: string, listings = LISTINGS) => {
    let deep = 0;
    for (const [query, filter] of listings) {
      for (let start = 6; start <= LISTED + 12; start += 7) {
        const expected = await page(query, filter, start, start % 2 ? 5 : 3, false);
        expect(expected.some((name) => name.startsWith('archived'))).toBe(false);
        expect(await page(query, filter, start, start % 2 ? 5 : 3, true), `${what}: ${query} ${JSON.stringify(filter)} start=${start}`).toEqual(expected);
        if (expected.length > 0) deep++;
      }
    }
    expect(deep).toBeGreaterThan(listings.length * 4);
  };
  /** The jump structures of several: SQLite's `jumpm:` indexes, PostgreSQL's sets of value type `many`. */
  const structures = async () => (await indexes().indexesOf(g.base.id, tableId)).filter((e) => e.value_type === 'many');
  const ref = () => ({ id: g.base.id, uuid: g.base.uuid });

  it('builds one structure per listing and answers every cold deep page as without it', async () => {
    expect(await structures()).toEqual([]);
    indexes().options.minRows = 100;
    indexes().options.recountMs = 0;
    indexes().options.positionSkip = 5;
    for (const [query, filter] of LISTINGS) await page(query, filter, 9, 1, true);
    await indexes().idle();
    const built = await structures();
    expect(built).toHaveLength(LISTINGS.length);
    expect(built.every((e) => (dialect === 'sqlite' ? e.kind.startsWith('jumpm:') : e.kind === 'jumpset'))).toBe(true);
    await compare('built');
  }, 240_000);

  it('the structure is what answers: read in the listing\'s order, the filter checked on its entries (no row read, no sort)', async () => {
    const rows = t.container.baseData.rows;
    for (const [query, filter] of LISTINGS) {
      const input = { table_name: 'T', start: 60, limit: 5, ...Object.fromEntries(new URLSearchParams(query)) };
      if (dialect === 'sqlite') {
        const plan = await rows.explainList(ref(), input, {}, filter as Record<string, unknown> | undefined);
        expect(plan, query).toMatch(/USING INDEX bri_\d+_\w+_jm[0-9a-f]{20}\b/);
        expect(plan, query).not.toMatch(/TEMP B-TREE/);
      } else {
        const plan = (await rows.explainJumpSet(ref(), input, {}, filter as Record<string, unknown> | undefined)) ?? '';
        expect(plan, query).toMatch(/Index Only Scan using brj_/);
        expect(plan, query).not.toMatch(/Sort/);
      }
    }
  });

  it('follows appends, updates, archived rows and deletions', async () => {
    await appendRows(g, 'T', tiedRows(30).map((r, i) => ({ ...r, M: (i * 5) % 4, Name: `late ${i}` })));
    const listed = await g.call('GET', 'rows/?table_name=T&convert_keys=true&limit=1000');
    const ids = listed.json<{ rows: Array<{ _id: string }> }>().rows.map((r) => r._id);
    // Ties, emptied cells and moved values; some rows deleted; more archived rows.
    const updates = ids.slice(0, 40).map((row_id, i) => ({ row_id, row: i % 4 === 0 ? { N: null, Label: null, M: null } : { N: (i % 3) - 1, Label: i % 2 ? 'a' : 'Z', M: i % 3 } }));
    expect((await g.call('PUT', 'rows/', { table_name: 'T', updates })).statusCode).toBe(200);
    expect((await g.call('DELETE', 'rows/', { table_name: 'T', row_ids: ids.slice(50, 70) })).statusCode).toBe(200);
    const archived = await g.call('POST', 'add-archived-rows/', { table_name: 'T', rows: tiedRows(12).map((r, i) => ({ ...r, M: i % 4, Name: `archived late ${i}` })) });
    expect(archived.statusCode, archived.body).toBe(200);
    expect(await structures()).toHaveLength(LISTINGS.length);
    await compare('after writes');
  }, 240_000);

  it('follows a rename (kept), a type change and a deleted column (dropped)', async () => {
    const put = (body: Record<string, unknown>) => g.call('PUT', 'columns/', { table_name: 'T', ...body });
    const before = (await structures()).map((e) => e.name).sort();
    expect((await put({ op_type: 'rename_column', column: 'Label', new_column_name: 'Tag' })).statusCode).toBe(200);
    await indexes().idle();
    expect((await structures()).map((e) => e.name).sort()).toEqual(before);
    expect((await put({ op_type: 'rename_column', column: 'Tag', new_column_name: 'Label' })).statusCode).toBe(200);
    // M becomes text: every structure carrying M (as a filter or a sort) goes.
    expect((await put({ op_type: 'modify_column_type', column: 'M', new_column_type: 'text' })).statusCode).toBe(200);
    await indexes().idle();
    const withoutM: Array<[string, object | undefined]> = [
      ['view_name=Two sorts', undefined],
      ['', twoAnd],
      ['view_name=Two sorts', twoAnd],
    ];
    expect(await structures()).toHaveLength(withoutM.length);
    // The listings on M as text build new structures and answer as without them.
    for (const [query, filter] of LISTINGS) await page(query, filter, 9, 1, true);
    await indexes().idle();
    const views = (await g.call('GET', 'views/?table_name=T')).json<{ views: Array<{ name: string; filters: unknown[] }> }>().views;
    // (a view's number filter on M no longer applies to text: the view keeps its other filters)
    const orFilters = views.find((v) => v.name === 'Or filters')!.filters.length;
    expect(await structures()).toHaveLength(LISTINGS.length - (orFilters < 2 ? 1 : 0));
    await compare('M as text');
    // Label deleted: every structure carrying it goes, with its index (and rows).
    expect((await g.call('DELETE', 'columns/', { table_name: 'T', column: 'Label' })).statusCode).toBe(200);
    await indexes().idle();
    const left = await structures();
    expect(left.length).toBeLessThan(LISTINGS.length);
    const db = t.container.db;
    if (dialect === 'sqlite') {
      const { rows } = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name like ${'bri_%_jm%'}`.execute(db);
      expect(rows.map((r) => r.name).sort()).toEqual(left.map((e) => e.name).sort());
    } else {
      const { rows } = await sql<{ name: string }>`select name from row_jump_defs where cells is not null`.execute(db);
      expect(rows.map((r) => r.name).sort()).toEqual(left.map((e) => e.name).sort());
      const keys = await sql<{ n: string }>`select count(*) as n from row_jump_keys k join row_jump_defs d on d.id = k.jump_id where d.cells is not null`.execute(db);
      expect(Number(keys.rows[0]!.n)).toBe(left.length * (LISTED + 30 - 20));
    }
  }, 240_000);
});
