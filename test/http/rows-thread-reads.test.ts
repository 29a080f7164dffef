import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, migrateToLatest, SQLITE_TICK_FUNCTION } from '../../src/db/index.js';
import type { ThreadReadOptions } from '../../src/modules/rows/index.js';
import { createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, type Gateway } from './rows.fixtures.js';
import { bigTable } from './row-index.fixtures.js';

/**
 * Listing reads of big tables on SQLite's reader threads (rows/thread-reads.ts): a read no index bounds
 * runs off the event loop, under its base's share of the threads and a time limit, and answers exactly
 * what the same read answers on the event loop. SQLite on a file only (a database in memory has no file
 * for a thread to open; PostgreSQL reads in its own processes).
 */
describe('listing reads of big SQLite tables on reader threads', () => {
  let t: TestApp;
  let g: Gateway;
  let other: Gateway;
  let dir: string;
  const options = (): ThreadReadOptions => t.container.baseData.rows.threadReads!;
  const threadReads = () => t.container.baseData.rows.threadReadCount;

  /** A listing's answer (names), with the page cache emptied first; `on`: where it is read. */
  const page = async (gw: Gateway, query: string, filters?: unknown[]) => {
    t.container.baseData.snapshots.evict(gw.base.id);
    const res = filters ? await gw.call('POST', `filtered-rows/?table_name=Big&convert_keys=true${query}`, { filters }) : await gw.call('GET', `rows/?table_name=Big&convert_keys=true${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<Record<string, unknown>> }>().rows.map((r) => r.Name as string);
  };
  /** The answer read on the event loop (every table "small"), then on a thread: both, and the thread statements it took. */
  const bothWays = async (gw: Gateway, query: string, filters?: unknown[]) => {
    options().minRows = 1_000_000_000;
    const here = await page(gw, query, filters);
    options().minRows = 100;
    const before = threadReads();
    const there = await page(gw, query, filters);
    return { here, there, statements: threadReads() - before };
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'basegate-thread-reads-'));
    const database = connect({ databaseUrl: `sqlite:${path.join(dir, 'basegate.sqlite3')}`, dataDir: dir });
    await migrateToLatest(database.db);
    t = await createTestApp('sqlite', {}, { database });
    ({ g } = await bigTable(t, { due: true }));
    ({ g: other } = await bigTable(t));
    expect(options().minRows).toBeGreaterThan(1_000);
    expect(options().nearIds).toBeGreaterThan(1_000);
    // The first 50 ids of an unsorted listing are read here before a thread (RowsService nearFirst): the table has 300.
    options().nearIds = 50;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const CASES: Array<[string, string, unknown[] | undefined]> = [
    ['a text filter', '', [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '9' }]],
    ['a rare text filter, a later page', '&start=3&limit=4', [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '29' }]],
    ['a number range', '&limit=50', [{ column_name: 'Price', filter_predicate: 'greater', filter_term: 500 }]],
    ['a date filter and an option', '', [{ column_name: 'Due', filter_predicate: 'is_on_or_after', filter_term: '2026-06-15', filter_term_modifier: 'exact_date' }, { column_name: 'Kind', filter_predicate: 'is_not', filter_term: 'Open' }]],
    ['a page begun in the ids read here first and ended on a thread', '&start=5&limit=20', [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '1' }]],
    ['a page that skips past the ids read here first', '&start=20&limit=5', [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '1' }]],
    ['a filter nothing matches', '', [{ column_name: 'Name', filter_predicate: 'contains', filter_term: 'nowhere' }]],
    ['a sort', '&order_by=Price&direction=desc&limit=20', undefined],
    ['a filter and a sort, deep', '&order_by=Price&start=40&limit=25', [{ column_name: 'Kind', filter_predicate: 'is', filter_term: 'Open' }]],
  ];
  it.each(CASES)('%s answers on a thread what it answers on the event loop', async (name, query, filters) => {
    const { here, there, statements } = await bothWays(g, query, filters);
    expect(there).toEqual(here);
    expect(statements).toBeGreaterThan(0);
    expect(here.length === 0).toBe(name === 'a filter nothing matches');
  });

  it("reads a filtered view's export pages on a thread, as here", async () => {
    const view = await g.call('POST', 'views/?table_name=Big', { name: 'Nines', filters: [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '9' }] });
    expect(view.statusCode, view.body).toBe(200);
    const scan = async () => {
      const names: string[] = [];
      for await (const rows of t.container.baseData.rows.scan({ id: g.base.id, uuid: g.base.uuid }, { table_name: 'Big', view_name: 'Nines', convert_keys: true }, {}, 7)) names.push(...rows.map((r) => r.Name as string));
      return names;
    };
    options().minRows = 1_000_000_000;
    const here = await scan();
    options().minRows = 100;
    const before = threadReads();
    expect(await scan()).toEqual(here);
    expect(here).toHaveLength(57);
    expect(here.every((name) => name.includes('9'))).toBe(true);
    expect(threadReads() - before).toBe(Math.ceil(57 / 7));
  });

  it('answers the filter as the rows say, on a thread', async () => {
    options().minRows = 100;
    const before = threadReads();
    const names = await page(g, '&limit=1000', [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '29' }]);
    expect(names).toEqual(['item 029', 'item 129', 'item 229', 'item 290', 'item 291', 'item 292', 'item 293', 'item 294', 'item 295', 'item 296', 'item 297', 'item 298', 'item 299']);
    expect(threadReads()).toBeGreaterThan(before);
  });

  it("reads a search through the table's trigram index on a thread (its probe too), as here", async () => {
    const indexes = t.container.baseData.indexes;
    const rows = t.container.baseData.rows;
    indexes.options.minRows = 100;
    // Searched before while "small" (under 20,000 rows): counted again now.
    indexes.options.recountMs = 0;
    try {
      const search = [{ column_name: 'Name', filter_predicate: 'contains', filter_term: 'item 29' }];
      const { here } = await bothWays(g, '&limit=1000', search);
      await indexes.idle();
      expect(indexes.searchIndex(g.base.id, (await g.call('GET', 'metadata/')).json<{ metadata: { tables: Array<{ _id: string; name: string }> } }>().metadata.tables.find((x) => x.name === 'Big')!._id)).toBeDefined();
      const pages = rows.searchedPages;
      const { there, statements } = await bothWays(g, '&limit=1000', search);
      expect(there).toEqual(here);
      expect(here).toEqual(['item 290', 'item 291', 'item 292', 'item 293', 'item 294', 'item 295', 'item 296', 'item 297', 'item 298', 'item 299']);
      expect(rows.searchedPages).toBeGreaterThan(pages);
      // The probe and the read, both on the thread.
      expect(statements).toBeGreaterThanOrEqual(2);
      const sorted = await bothWays(g, '&order_by=Price&limit=1000', search);
      expect(sorted.there).toEqual(sorted.here);
    } finally {
      indexes.options.minRows = 20_000;
      indexes.options.recountMs = 60_000;
      // The later tests count the statements of searches read without it.
      indexes.options.searchReads = false;
    }
  });

  it('reads a page the first ids fill on the event loop, a later one on a thread', async () => {
    options().minRows = 100;
    const before = threadReads();
    const filters = [{ column_name: 'Name', filter_predicate: 'contains', filter_term: 'item' }];
    expect(await page(g, '&limit=10', filters)).toEqual(Array.from({ length: 10 }, (_, i) => `item 00${i}`));
    expect(await page(g, '&start=30&limit=5', filters)).toEqual(['item 030', 'item 031', 'item 032', 'item 033', 'item 034']);
    expect(threadReads()).toBe(before);
    // Another filter (the one above knows where its page 35 ended): 48 + 5 rows are more than 50 ids hold.
    expect(await page(g, '&start=48&limit=4', [{ column_name: 'Name', filter_predicate: 'contains', filter_term: 'item 0' }])).toEqual(['item 048', 'item 049', 'item 050', 'item 051']);
    expect(threadReads()).toBe(before + 1);
  });

  it('reads an unfiltered first page, and a small table, on the event loop', async () => {
    options().minRows = 100;
    const before = threadReads();
    expect(await page(g, '&limit=3')).toEqual(['item 000', 'item 001', 'item 002']);
    await addTable(g, 'Small', [{ column_name: 'Name', column_type: 'text' }]);
    await appendRows(g, 'Small', [{ Name: 'a9' }, { Name: 'b' }, { Name: 'c9' }]);
    t.container.baseData.snapshots.evict(g.base.id);
    const res = await g.call('POST', 'filtered-rows/?table_name=Small', { filters: [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '9' }] });
    expect(res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name)).toEqual(['a9', 'c9']);
    expect(threadReads()).toBe(before);
  });

  it('sees a row written just before the read', async () => {
    options().minRows = 100;
    const added = await g.call('POST', 'rows/', { table_name: 'Big', rows: [{ Name: 'just written zq' }] });
    expect(added.statusCode, added.body).toBe(200);
    const before = threadReads();
    expect(await page(g, '', [{ column_name: 'Name', filter_predicate: 'contains', filter_term: 'zq' }])).toEqual(['just written zq']);
    expect(threadReads()).toBeGreaterThan(before);
    const metrics = (await t.request({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain(`basegate_listing_thread_reads ${threadReads()}\n`);
  });

  it("waits for its base's share of the threads while another base's read is served, and answers 503 past its time limit", async () => {
    options().minRows = 100;
    const threads = options().threads;
    // The base's share (one of the two threads) held by a statement of its own that runs until its own limit
    // (it calls the tick function per row, so its thread stops as soon as it is terminated).
    const endless = `with recursive c(x) as (select 1 union all select x + 1 from c where x < 2000000000 and ${SQLITE_TICK_FUNCTION}(x) = 1) select count(*) as n from c`;
    const holding = threads.query(endless, [], g.base.id, 6_000).then(
      () => 'finished',
      (error: Error) => error.name,
    );
    const limit = options().timeoutMs;
    options().timeoutMs = 3_000;
    try {
      const filters = [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '7' }];
      const [mine, theirs] = await Promise.all([
        (t.container.baseData.snapshots.evict(g.base.id), g.call('POST', 'filtered-rows/?table_name=Big', { filters })),
        page(other, '', filters),
      ]);
      expect(theirs.length).toBeGreaterThan(10);
      expect(mine.statusCode, mine.body).toBe(503);
      expect(mine.json()).toEqual({ error_msg: 'The database did not answer in time. Please retry later.' });
      expect(mine.headers['retry-after']).toBe('5');
    } finally {
      options().timeoutMs = limit;
    }
    expect(await holding).toBe('ThreadTimeoutError');
    // The share is free again: the base's read is served.
    expect(await page(g, '', [{ column_name: 'Name', filter_predicate: 'contains', filter_term: '77' }])).toEqual(['item 077', 'item 177', 'item 277']);
  });
});
