import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appendRows, appWithTiedTable, tiedRows, type Gateway } from './rows.fixtures.js';

/**
 * A listing sorted on one column whose own row index is not built yet, while the other direction's is,
 * reads that index backwards (rows/backward-sort-read.ts, issue 34) instead of sorting the table: the
 * same pages as without any index — first pages, pages after a known page end (keyset) and by cursor —
 * across ties, empty cells and archived rows; and its statements are index scans, not a sort.
 * "Big" is lowered to 10 rows here; the other direction's build is held (`maxIndexes`).
 */
describe.each(DIALECTS)('first sort in a new direction, from the other index backwards (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const base = () => ({ id: g.base.id, uuid: g.base.uuid });
  type Page = { rows: Array<{ Name: string }>; next_cursor?: string };
  // Each on a column of its own (M and Tag copy N and Label): one listing's indexes are not another's.
  const LISTINGS = ['order_by=N&direction=desc', 'order_by=Label&direction=desc', 'order_by=M', 'order_by=Tag'];
  /** The answer without any index, per listing. */
  const expected = new Map<string, string[]>();

  const indexes = () => t.container.baseData.indexes;
  const rows = () => t.container.baseData.rows;
  const page = async (query: string, extra: string): Promise<Page> => {
    // The page cache would answer without reading: evicted before each.
    t.container.baseData.snapshots.evict(g.base.id);
    const res = await g.call('GET', `rows/?table_name=T&convert_keys=true&${query}&${extra}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Page>();
  };
  const names = (p: Page) => p.rows.map((r) => r.Name);

  beforeAll(async () => {
    ({ t, g } = await appWithTiedTable(dialect, [
      { column_name: 'M', column_type: 'number' },
      { column_name: 'Tag', column_type: 'text' },
    ]));
    // Many ties (N takes 6 values, Label 6), empty cells, and archived rows among them.
    const copied = (prefix: string, n: number) => tiedRows(n).map((r) => ({ ...r, Name: `${prefix}${String(r.Name)}`, M: r.N, Tag: r.Label }));
    await appendRows(g, 'T', copied('', 120));
    const archived = await g.call('POST', 'add-archived-rows/', { table_name: 'T', rows: copied('archived ', 12) });
    expect(archived.statusCode, archived.body).toBe(200);
    await appendRows(g, 'T', copied('late ', 40));
    // The answers with no index at all (the table is not "big" yet).
    indexes().options.minRows = 1_000_000;
    for (const query of LISTINGS) expected.set(query, names(await page(query, 'limit=1000')));
    await indexes().idle();
    expect(await indexes().indexesOf(g.base.id, (await table())._id)).toEqual([]);
    indexes().options.minRows = 10;
    indexes().options.recountMs = 0;
  });
  afterAll(() => t.close());

  const table = async () => {
    const res = await g.call('GET', 'metadata/');
    return res.json<{ metadata: { tables: Array<{ _id: string; name: string; columns: Array<{ key: string; name: string }> }> } }>().metadata.tables.find((x) => x.name === 'T')!;
  };
  /** The kinds of the row indexes of the column `query` sorts on. */
  const kindsOf = async (query: string) => {
    const { _id, columns } = await table();
    const key = columns.find((c) => c.name === /order_by=(\w+)/.exec(query)![1])!.key;
    return (await indexes().indexesOf(g.base.id, _id)).filter((e) => e.column_key === key).map((e) => e.kind);
  };
  /** Only the index of `query`'s other direction is built; its own is held from being built (`maxIndexes`). */
  const onlyOther = async (query: string) => {
    const other = query.includes('desc') ? query.replace('&direction=desc', '') : `${query}&direction=desc`;
    // Builds the listings before asked for (held) drain first: none of them is built when the hold is lifted.
    await indexes().idle();
    indexes().options.maxIndexes = 2_000;
    await page(other, 'limit=1');
    await indexes().idle();
    indexes().options.maxIndexes = indexes().count();
    expect(await kindsOf(query)).toEqual([query.includes('desc') ? 'asc' : 'desc']);
  };

  it.each(LISTINGS)('%s: first pages, keyset continuations and cursor pages as without an index', async (query) => {
    const all = expected.get(query)!;
    expect(all.length).toBe(160);
    await onlyOther(query);
    const before = rows().backwardPages;
    // First pages by start (each after the page end learned from the one before: keyset), and one across the empty cells.
    const seen: string[] = [];
    for (let start = 0; start < all.length; start += 9) seen.push(...names(await page(query, `start=${start}&limit=9`)));
    expect(seen).toEqual(all);
    // Pages by start alone (no page end known), some across runs of ties, the last across the empty cells.
    for (let start = 0; start < all.length; start += 5) {
      rows().positions.clear();
      expect(names(await page(query, `start=${start}&limit=7`)), `start=${start}`).toEqual(all.slice(start, start + 7));
    }
    // By cursor, from the first page to the last.
    const walked: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 100; i++) {
      const p = await page(query, `limit=11${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      walked.push(...names(p));
      cursor = p.next_cursor;
      if (!cursor) break;
    }
    expect(walked).toEqual(all);
    // Every page above came from the other index read backwards, and the own index was held back.
    expect(rows().backwardPages - before).toBeGreaterThan(30);
    expect(await kindsOf(query)).toEqual([query.includes('desc') ? 'asc' : 'desc']);
  });

  it('reads the other index backwards, ranges of it forward, and sorts nothing (plan)', async () => {
    for (const query of ['order_by=N&direction=desc', 'order_by=Tag']) {
      await onlyOther(query);
      const input = Object.fromEntries(new URLSearchParams(`table_name=T&convert_keys=true&limit=20&${query}`));
      const plans = await rows().explainBackward(base(), { ...input, limit: 20 }, {}, query.includes('Tag') ? 'b' : 3);
      expect(plans, query).toBeDefined();
      const all = `${plans!.backward}\n${plans!.ties}\n${plans!.empty}`;
      if (dialect === 'postgres') {
        expect(plans!.backward).toMatch(/Index Scan Backward using bri_/);
        // An equality range in id order: on this small table the planner may take the primary key (in id order too; at 1,000,000 rows the row index).
        expect(plans!.ties).toMatch(/Index Scan using/);
        expect(plans!.empty).toMatch(/Index Scan using bri_/);
        expect(all).not.toMatch(/Sort/);
      } else {
        for (const plan of [plans!.backward, plans!.ties, plans!.empty]) expect(plan).toMatch(/USING INDEX bri_/);
        expect(all).not.toMatch(/TEMP B-TREE/);
      }
    }
  });
});
