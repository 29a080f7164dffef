import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { type Gateway } from './rows.fixtures.js';
import { bigTable } from './row-index.fixtures.js';

/**
 * A row index that went away under a listing that picked it (another process on the same SQLite file,
 * or another instance, dropped it in its reconcile; or this one's reconcile between the pick and the
 * read): SQLite refuses `INDEXED BY` a missing index ("no such index"), which reached the client as a
 * 500. The listing reads without the index instead, answers the same rows, and forgets the index.
 */
describe.each(DIALECTS)('a row index dropped under the listings (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    ({ g, tableId } = await bigTable(t));
    t.container.baseData.indexes.options.minRows = 100;
  });
  afterAll(() => t.close());

  const indexes = () => t.container.baseData.indexes;
  const read = async (query: string, filters?: unknown[]) => {
    t.container.baseData.snapshots.evict(g.base.id);
    const res = filters
      ? await g.call('POST', `filtered-rows/?table_name=Big&convert_keys=true&${query}`, { filters, filter_conjunction: 'And' })
      : await g.call('GET', `rows/?table_name=Big&convert_keys=true&${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<Record<string, unknown>> }>().rows.map((r) => r.Name);
  };

  it.each([
    ['a sorted listing', 'order_by=Price&limit=50', undefined],
    ['a descending page', 'order_by=Price&direction=desc&limit=20&start=100', undefined],
    ['a filtered listing', 'limit=50', [{ column_name: 'Price', filter_predicate: 'greater', filter_term: 900 }]],
  ])('%s answers the same after its index was dropped behind the app', async (_name, query, filters) => {
    const before = await read(query, filters);
    await indexes().idle();
    const built = await indexes().indexesOf(g.base.id, tableId);
    expect(built.length).toBeGreaterThan(0);
    // What another process's reconcile does: the index is gone from the database, not from this app's memory.
    for (const entry of built) await sql.raw(`drop index if exists "${entry.name}"`).execute(t.container.db);
    expect(await read(query, filters)).toEqual(before);
    expect(await read(query, filters)).toEqual(before);
    await indexes().idle();
    if (dialect === 'sqlite') {
      // Forgotten by the read that found it gone, so the next use built it again.
      await read(query, filters);
      await indexes().idle();
      const present = await sql<{ name: string }>`select name from sqlite_master where type = 'index' and name like 'bri_%'`.execute(t.container.db);
      // (All were dropped; the one this read uses is back.)
      expect(present.rows.length).toBeGreaterThan(0);
      expect(built.map((e) => e.name)).toEqual(expect.arrayContaining(present.rows.map((r) => r.name)));
    }
  });

  it('a SQL statement answers the same after the row index it was hinted was dropped behind the app', async () => {
    const run = async () => {
      const res = await g.call('POST', 'sql/', { sql: 'SELECT Name FROM Big WHERE Price > 950 ORDER BY Name', convert_keys: true });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ results: unknown[] }>().results;
    };
    const before = await run();
    await indexes().idle();
    const built = await indexes().indexesOf(g.base.id, tableId);
    expect(built.length).toBeGreaterThan(0);
    for (const entry of built) await sql.raw(`drop index if exists "${entry.name}"`).execute(t.container.db);
    expect(await run()).toEqual(before);
    expect(await run()).toEqual(before);
    await indexes().idle();
  });
});
