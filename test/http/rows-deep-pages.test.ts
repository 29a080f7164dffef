import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appendRows, appWithTable, tiedRows, type Gateway } from './rows.fixtures.js';

/**
 * Deep pages of unsorted listings start after the nearest page end served before (rows/listing-positions.ts):
 * paging through gives exactly the offset answer, with and without a filter, and a write in between
 * (which moves every later row's position) is never answered from the positions learned before it.
 */
describe.each(DIALECTS)('deep pages by keyset (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const N = 230;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect, {}, [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'N', column_type: 'number' },
    ]));
    await appendRows(g, 'T', Array.from({ length: N }, (_, i) => ({ Name: `r${i}`, N: i })));
  });
  afterAll(() => t.close());

  const page = async (start: number, limit: number, filters?: unknown[]) => {
    // Page cache evicted: every page is built from the rows (and the positions).
    t.container.baseData.snapshots.evict(g.base.id);
    const res = filters
      ? await g.call('POST', `filtered-rows/?table_name=T&start=${start}&limit=${limit}`, { filters })
      : await g.call('GET', `rows/?table_name=T&convert_keys=true&start=${start}&limit=${limit}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name);
  };
  const names = (from: number, to: number, step = 1) => Array.from({ length: Math.ceil((to - from) / step) }, (_, i) => `r${from + i * step}`);

  it('pages through a table as the offsets would, learning page ends on the way', async () => {
    const seen: string[] = [];
    for (let start = 0; start < N; start += 40) seen.push(...(await page(start, 40)));
    expect(seen).toEqual(names(0, N));
    // A page between known ends, and one overlapping the last.
    expect(await page(95, 10)).toEqual(names(95, 105));
    expect(await page(225, 40)).toEqual(names(225, N));
    expect(await page(N, 10)).toEqual([]);
    expect(t.container.baseData.rows.positions.stats.positions).toBeGreaterThan(0);
  });

  it('pages through a filtered listing as the offsets would', async () => {
    const even = [{ column_name: 'N', filter_predicate: 'greater_or_equal', filter_term: 100 }];
    const seen: string[] = [];
    for (let start = 0; start < N; start += 25) seen.push(...(await page(start, 25, even)));
    expect(seen).toEqual(names(100, N));
  });

  it('does not use page ends learned before a write', async () => {
    expect(await page(120, 5)).toEqual(names(120, 125));
    const [id] = (await g.call('GET', 'rows/?table_name=T&start=10&limit=1')).json<{ rows: Array<{ _id: string }> }>().rows.map((r) => r._id);
    expect((await g.call('DELETE', 'rows/', { table_name: 'T', row_ids: [id] })).statusCode).toBe(200);
    // r10 is gone: position 120 is now r121.
    expect(await page(120, 5)).toEqual(names(121, 126));
    expect(await page(125, 5)).toEqual(names(126, 131));
  });
});

/**
 * A jump deep into an unfiltered listing counts the rows before it through the table's position index
 * (rows/row-indexes.ts, kind `position`): the same pages as the offsets, archived rows (which the index
 * leaves out) and deleted rows included. "Big" is lowered to 100 rows and a "deep" jump to 10 rows here.
 */
describe.each(DIALECTS)('deep page jumps through the position index (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const N = 260;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect, {}, [{ column_name: 'Name', column_type: 'text' }]));
    await appendRows(g, 'T', Array.from({ length: 120 }, (_, i) => ({ Name: `r${i}` })));
    const archived = await g.call('POST', 'add-archived-rows/', { table_name: 'T', rows: Array.from({ length: 15 }, (_, i) => ({ Name: `archived ${i}` })) });
    expect(archived.statusCode, archived.body).toBe(200);
    await appendRows(g, 'T', Array.from({ length: N - 120 }, (_, i) => ({ Name: `r${120 + i}` })));
  });
  afterAll(() => t.close());

  const indexes = () => t.container.baseData.indexes;
  const page = async (start: number, limit: number) => {
    t.container.baseData.snapshots.evict(g.base.id);
    const res = await g.call('GET', `rows/?table_name=T&convert_keys=true&start=${start}&limit=${limit}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name);
  };
  const names = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => `r${from + i}`);
  const JUMPS: Array<[number, number]> = [[0, 20], [11, 5], [100, 30], [118, 10], [200, 100], [259, 5], [260, 5], [5000, 5]];

  it('answers jumps as the offsets do, before and after the index is built', async () => {
    indexes().options.minRows = 100;
    indexes().options.recountMs = 0;
    indexes().options.positionSkip = 10;
    const tableId = (await g.call('GET', 'metadata/')).json<{ metadata: { tables: Array<{ _id: string; name: string }> } }>().metadata.tables.find((x) => x.name === 'T')!._id;
    for (const [start, limit] of JUMPS) expect(await page(start, limit)).toEqual(names(start, Math.min(N, start + limit)));
    await indexes().idle();
    expect((await indexes().indexesOf(g.base.id, tableId)).map((e) => e.kind)).toEqual(['position']);
    expect(indexes().positionIndex(g.base.id, tableId)).toBeDefined();
    for (const [start, limit] of JUMPS) expect(await page(start, limit)).toEqual(names(start, Math.min(N, start + limit)));

    // A deleted row moves every later position by one.
    const [id] = (await g.call('GET', 'rows/?table_name=T&start=50&limit=1')).json<{ rows: Array<{ _id: string }> }>().rows.map((r) => r._id);
    expect((await g.call('DELETE', 'rows/', { table_name: 'T', row_ids: [id] })).statusCode).toBe(200);
    expect(await page(100, 5)).toEqual(names(101, 106));
    // A structural change keeps the index while its table exists.
    expect((await g.call('POST', 'columns/', { table_name: 'T', column_name: 'Extra', column_type: 'text' })).statusCode).toBe(200);
    expect(indexes().positionIndex(g.base.id, tableId)).toBeDefined();
  });

  it('reads the page without reading the rows before it (the plan counts through the index)', async () => {
    const tableId = (await g.call('GET', 'metadata/')).json<{ metadata: { tables: Array<{ _id: string; name: string }> } }>().metadata.tables.find((x) => x.name === 'T')!._id;
    const plan = await t.container.baseData.rows.explainList({ id: g.base.id, uuid: g.base.uuid }, { table_name: 'T', start: 200, limit: 10 }, {});
    expect(plan).toContain(indexes().positionIndex(g.base.id, tableId)!);
  });
});

/**
 * Pages of sorted listings start after the last row of the nearest page served before, by its sort values
 * and id (keyset, rows/sort-sql.ts `keysetAfter`): paging through gives exactly the offset answer across
 * ties, empty cells (last in either direction), mixed stored types and several sort columns.
 */
describe.each(DIALECTS)('sorted pages by keyset (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const N = 97;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect, {}, [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'N', column_type: 'number' },
      { column_name: 'Label', column_type: 'text' },
    ]));
    // Many ties (N takes 6 values), empty cells in both columns, text with case and accents.
    await appendRows(g, 'T', tiedRows(N));
    const view = await g.call('POST', 'views/?table_name=T', { name: 'Two sorts' });
    expect(view.statusCode, view.body).toBe(200);
    const sorted = await g.call('PUT', 'views/Two sorts/?table_name=T', {
      sorts: [
        { column_key: 'Label', sort_type: 'down' },
        { column_key: 'N', sort_type: 'up' },
      ],
    });
    expect(sorted.statusCode, sorted.body).toBe(200);
  });
  afterAll(() => t.close());

  const QUERIES = ['order_by=N', 'order_by=N&direction=desc', 'order_by=Label', 'order_by=Label&direction=desc', 'view_name=Two sorts'];

  it.each(QUERIES)('pages through %s as the offsets would', async (query) => {
    // The offset answer: the service's list() reads without positions.
    const base = { id: g.base.id, uuid: g.base.uuid };
    const input = Object.fromEntries(new URLSearchParams(`table_name=T&convert_keys=true&limit=1000&${query}`));
    const all = (await t.container.baseData.rows.list(base, { ...input, limit: 1000 }, {})).map((r) => r.Name);
    expect(all).toHaveLength(N);
    for (const size of [7, 10]) {
      const seen: unknown[] = [];
      for (let start = 0; start < N; start += size) {
        t.container.baseData.snapshots.evict(g.base.id);
        const res = await g.call('GET', `rows/?table_name=T&convert_keys=true&${query}&start=${start}&limit=${size}`);
        expect(res.statusCode, res.body).toBe(200);
        seen.push(...res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name));
      }
      expect(seen).toEqual(all);
      // Between known page ends (a keyset step and a short skip), and past the end.
      t.container.baseData.snapshots.evict(g.base.id);
      const mid = await g.call('GET', `rows/?table_name=T&convert_keys=true&${query}&start=${size + 3}&limit=5`);
      expect(mid.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name)).toEqual(all.slice(size + 3, size + 8));
    }
    expect(t.container.baseData.rows.positions.stats.positions).toBeGreaterThan(0);
  });

  it('does not use page ends learned before a write', async () => {
    const read = async (start: number) => {
      t.container.baseData.snapshots.evict(g.base.id);
      return (await g.call('GET', `rows/?table_name=T&convert_keys=true&order_by=N&start=${start}&limit=10`)).json<{ rows: Array<{ Name: string; _id: string }> }>().rows;
    };
    await read(0);
    const second = await read(10);
    // The first row of the second page moves to the end (a larger N): position 10 is the next row now.
    expect((await g.call('PUT', 'rows/', { table_name: 'T', row_id: second[0]!._id, row: { N: 100 } })).statusCode).toBe(200);
    const base = { id: g.base.id, uuid: g.base.uuid };
    const all = (await t.container.baseData.rows.list(base, { table_name: 'T', convert_keys: true, order_by: 'N', limit: 1000 }, {})).map((r) => r.Name);
    expect((await read(10)).map((r) => r.Name)).toEqual(all.slice(10, 20));
  });
});
