import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, SharedDatabase, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, readOnlyToken, through, type Gateway } from './rows.fixtures.js';

type Row = Record<string, unknown>;

/**
 * `rows/` and `filtered-rows/` pages are cached beside the whole-base body under the base's revision
 * (BaseSnapshots.page): every write must show on the next read, on this instance and on another one,
 * and a page must never be served to a request it does not answer (another user's `include_me`,
 * another day's relative dates, other parameters).
 */
describe.each(DIALECTS)('listing pages and the revision cache (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const list = async (as: Gateway = g, query = 'table_name=Table1&convert_keys=true', token?: string) => {
    const res = await as.call('GET', `rows/?${query}`, undefined, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Row[] }>().rows;
  };
  const filtered = async (filters: unknown[], token?: string, as: Gateway = g) => {
    const res = await as.call('POST', 'filtered-rows/?table_name=Table1', { filters }, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Row[] }>().rows;
  };
  const names = (rows: Row[]) => rows.map((r) => r.Name);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
  });
  afterAll(() => t.close());

  it('serves a repeated read from the cache and shows every kind of write at once', async () => {
    expect(await list()).toEqual([]);
    expect(await list()).toEqual([]);
    expect(t.container.baseData.snapshots.pageStats.pages).toBeGreaterThan(0);

    const [a] = await appendRows(g, 'Table1', [{ Name: 'a' }]);
    expect(names(await list())).toEqual(['a']);
    expect(names(await filtered([{ column_name: 'Name', filter_predicate: 'is', filter_term: 'a' }]))).toEqual(['a']);

    expect((await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: a, row: { Name: 'b' } }] })).statusCode).toBe(200);
    expect(names(await list())).toEqual(['b']);
    expect(await filtered([{ column_name: 'Name', filter_predicate: 'is', filter_term: 'a' }])).toEqual([]);

    expect((await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Score', column_type: 'number' })).statusCode).toBe(200);
    expect((await list())[0]).toHaveProperty('Score', null);

    expect((await g.call('PUT', 'lock-rows/', { table_name: 'Table1', row_ids: [a] })).statusCode).toBe(200);
    expect((await list())[0]).toMatchObject({ _locked: true });

    expect((await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [a] })).statusCode).toBe(200);
    expect(await list()).toEqual([]);
  });

  it('keeps a page when a write is refused, and answers other parameters with their own page', async () => {
    await appendRows(g, 'Table1', [{ Name: 'x' }, { Name: 'y' }]);
    const before = await list();
    const refused = await g.call('POST', 'rows/', { table_name: 'Table1', rows: [{ Score: 'not a number' }] });
    expect(refused.statusCode).toBe(400);
    expect(await list()).toEqual(before);
    expect(names(await list(g, 'table_name=Table1&convert_keys=true&limit=1'))).toEqual(['x']);
    expect(names(await list(g, 'table_name=Table1&convert_keys=true&start=1'))).toEqual(['y']);
    expect(names(await list(g, 'table_name=Table1&convert_keys=true&order_by=Name&direction=desc'))).toEqual(['y', 'x']);
    expect(Object.keys((await list(g, 'table_name=Table1&convert_keys=false'))[0]!)).toContain('0000');
  });

  it("never serves one user's include_me page to another", async () => {
    const own = await gateway(t);
    await addTable(own, 'People', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'By', column_type: 'creator' },
    ]);
    await appendRows(own, 'People', [{ Name: 'mine' }]);
    const reader = await readOnlyToken(own);
    const mine = [{ column_name: 'By', filter_predicate: 'include_me' }];
    const call = (token?: string) => own.call('POST', 'filtered-rows/?table_name=People', { filters: mine }, token);
    expect(names((await call()).json().rows)).toEqual(['mine']);
    expect((await call(reader)).json().rows).toEqual([]);
    expect(names((await call()).json().rows)).toEqual(['mine']);
  });

  it('a relative date filter follows the day without any write', async () => {
    const own = await gateway(t);
    await addTable(own, 'Days', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Due', column_type: 'date' },
    ]);
    const today = new Date(t.clock.now()).toISOString().slice(0, 10);
    await appendRows(own, 'Days', [{ Name: 'due today', Due: today }]);
    const isToday = { filters: [{ column_name: 'Due', filter_predicate: 'is', filter_term_modifier: 'today' }] };
    const call = () => own.call('POST', 'filtered-rows/?table_name=Days', isToday);
    expect(names((await call()).json().rows)).toEqual(['due today']);
    t.clock.advance(86_400_000);
    try {
      expect((await call()).json().rows).toEqual([]);
    } finally {
      t.clock.advance(-86_400_000);
    }
  });

  it('sees a write made through another instance on the next read (SQLite: after 1 ms)', async () => {
    const shared = new SharedDatabase(dialect);
    const first = await createTestApp(dialect, {}, { database: await shared.open(), clock: t.clock });
    const second = await createTestApp(dialect, {}, { database: await shared.open(), clock: t.clock });
    try {
      const here = await gateway(first);
      const there = through(second, here);
      expect(await list(here)).toEqual([]);
      expect(await list(there)).toEqual([]); // both instances have the page cached now
      for (let i = 1; i <= 3; i++) {
        await appendRows(i % 2 ? there : here, 'Table1', [{ Name: `write ${i}` }]);
        if (dialect === 'sqlite') await new Promise((resolve) => setTimeout(resolve, 2));
        expect(await list(here)).toHaveLength(i);
        expect(await list(there)).toHaveLength(i);
        expect(await filtered([], undefined, here)).toHaveLength(i);
      }
    } finally {
      await first.close();
      await second.close();
      await shared.dispose();
    }
  });

  it('a revoked token or a deleted base is refused even while its page is cached', async () => {
    const own = await gateway(t);
    const reader = await readOnlyToken(own);
    expect((await own.call('GET', 'rows/?table_name=Table1', undefined, reader)).statusCode).toBe(200);
    const unshare = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${own.base.workspaceId}/dtable/${own.base.name}/share/`, token: own.owner.token, payload: { email: (await t.container.db.selectFrom('users').select('email').orderBy('id', 'desc').executeTakeFirstOrThrow()).email } });
    expect(unshare.statusCode, unshare.body).toBe(200);
    expect((await own.call('GET', 'rows/?table_name=Table1', undefined, reader)).statusCode).toBeGreaterThanOrEqual(401);
    const del = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${own.base.workspaceId}/dtable/`, token: own.owner.token, payload: { name: own.base.name } });
    expect(del.statusCode, del.body).toBe(200);
    const gone = await own.call('GET', 'rows/?table_name=Table1');
    expect(gone.statusCode).toBe(404);
  });
});
