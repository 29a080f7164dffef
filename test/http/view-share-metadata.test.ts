import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { through, type Gateway } from './rows.fixtures.js';
import { peopleBase, viewShareToken } from './view-share.fixtures.js';

/**
 * Issue 30: a view share's token reads the metadata of its one table — that table only, the shared view
 * only, the view's visible columns only — through `metadata/`, `columns/` and `views/`.
 */
describe.each(DIALECTS)("a view share reads its table's metadata only (%s)", (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let g: Gateway;
  let tableId: string;
  let token: string;
  const gw = (method: 'GET' | 'POST', suffix: string) => g.call(method, suffix, undefined, token);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    let people: { _id: string };
    ({ owner, base, g, people } = await peopleBase(t));
    tableId = people._id;
    const view = await g.call('POST', 'views/?table_name=People', {
      name: 'Red team',
      type: 'table',
      filters: [
        { column_name: 'Team', filter_predicate: 'is', filter_term: 'red' },
        { column_name: 'Salary', filter_predicate: 'greater', filter_term: 10 },
      ],
      sorts: [{ column_name: 'Salary', sort_type: 'up' }],
      hidden_columns: ['Salary'],
    });
    expect(view.statusCode, view.body).toBe(200);
    expect((await g.call('POST', 'views/?table_name=People', { name: 'Everything', type: 'table' })).statusCode).toBe(200);
    ({ token } = await viewShareToken(t, { owner, base, tableId, viewId: view.json()._id, permission: 'r' }));
  });
  afterAll(() => t.close());

  it('metadata/: the one table, the shared view, the visible columns; nothing that names a hidden column', async () => {
    const res = await gw('GET', 'metadata/');
    expect(res.statusCode, res.body).toBe(200);
    const tables = res.json().metadata.tables as Array<{ name: string; columns: Array<{ name: string }>; views: Array<Record<string, unknown>> }>;
    expect(tables.map((tb) => tb.name)).toEqual(['People']);
    expect(tables[0]!.columns.map((c) => c.name)).toEqual(['Name', 'Team']);
    expect(tables[0]!.views.map((v) => v.name)).toEqual(['Red team']);
    const view = tables[0]!.views[0]!;
    expect(view.hidden_columns).toEqual([]);
    expect(view.sorts).toEqual([]);
    expect(view.filters).toHaveLength(1);
    expect(JSON.stringify(res.json())).not.toContain('Salary');
    // The owner's metadata is as it was.
    const full = (await g.call('GET', 'metadata/')).json().metadata;
    expect(full.tables.map((tb: { name: string }) => tb.name)).toEqual(['Table1', 'People', 'Secret']);
    expect(full.tables[1].views.find((v: { name: string }) => v.name === 'Red team').hidden_columns).toHaveLength(1);
  });

  it('columns/ and views/: the same limits; another table or view is refused or not found', async () => {
    const columns = await gw('GET', 'columns/?table_name=People');
    expect(columns.statusCode, columns.body).toBe(200);
    expect(columns.json().columns.map((c: { name: string }) => c.name)).toEqual(['Name', 'Team']);
    expect((await gw('GET', `columns/?table_id=${tableId}&view_name=Everything`)).statusCode).toBe(404);
    const views = await gw('GET', 'views/?table_name=People');
    expect(views.statusCode, views.body).toBe(200);
    expect(views.json().views.map((v: { name: string }) => v.name)).toEqual(['Red team']);
    expect((await gw('GET', `views/${encodeURIComponent('Red team')}/?table_name=People`)).statusCode).toBe(200);
    expect((await gw('GET', 'views/Everything/?table_name=People')).statusCode).toBe(404);
    for (const suffix of ['columns/?table_name=Secret', 'views/?table_name=Secret']) {
      const res = await gw('GET', suffix);
      expect(res.statusCode, suffix).toBe(403);
    }
    // Still no structure changes, nor the whole base.
    expect((await g.call('POST', 'views/?table_name=People', { name: 'Mine', type: 'table' }, token)).statusCode).toBe(403);
    expect((await gw('GET', '')).statusCode).toBe(403);
  });
});
