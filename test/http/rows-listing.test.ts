import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, listRows, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('listing: sort, views, filters (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Fruit', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Price', column_type: 'number' },
      { column_name: 'Kind', column_type: 'single-select' },
      { column_name: 'Ripe', column_type: 'checkbox' },
      { column_name: 'Picked', column_type: 'date' },
    ]);
    await appendRows(g, 'Fruit', [
      { Name: 'banana', Price: 2, Kind: 'tropical', Ripe: true, Picked: '2026-01-03' },
      { Name: 'apple', Price: 10, Kind: 'pome', Ripe: false, Picked: '2026-01-05' },
      { Name: 'cherry', Price: 1.5, Kind: 'stone' },
      { Name: 'Date', Kind: 'tropical', Ripe: true, Picked: '2025-12-31' },
      { Name: 'elder', Price: -3 },
    ]);
  });
  afterAll(() => t.close());

  const names = (rows: Array<Record<string, unknown>>) => rows.map((r) => r.Name);

  it('keeps insertion order by default and pages with start/limit', async () => {
    expect(names(await listRows(g, 'table_name=Fruit&convert_keys=true'))).toEqual(['banana', 'apple', 'cherry', 'Date', 'elder']);
    expect(names(await listRows(g, 'table_name=Fruit&convert_keys=true&start=1&limit=2'))).toEqual(['apple', 'cherry']);
    expect(await listRows(g, 'table_name=Fruit&start=50')).toEqual([]);
  });

  it('sorts by order_by and direction in SQL; empty cells last', async () => {
    expect(names(await listRows(g, 'table_name=Fruit&convert_keys=true&order_by=Price'))).toEqual(['elder', 'cherry', 'banana', 'apple', 'Date']);
    expect(names(await listRows(g, 'table_name=Fruit&convert_keys=true&order_by=Price&direction=desc'))).toEqual(['apple', 'banana', 'cherry', 'elder', 'Date']);
    // code-point order: upper case before lower case on both engines
    expect(names(await listRows(g, 'table_name=Fruit&convert_keys=true&order_by=Name&direction=ASC'))).toEqual(['Date', 'apple', 'banana', 'cherry', 'elder']);
    expect(names(await listRows(g, 'table_name=Fruit&convert_keys=true&order_by=Picked&limit=2'))).toEqual(['Date', 'banana']);
    const bad = await g.call('GET', 'rows/?table_name=Fruit&order_by=Nope');
    expect(bad.statusCode).toBe(404);
    expect((await g.call('GET', 'rows/?table_name=Fruit&order_by=Price&direction=up')).statusCode).toBe(400);
  });

  it('applies a view: filters, sorts and hidden columns; by name or id', async () => {
    const created = await g.call('POST', 'views/?table_name=Fruit', { name: 'Cheap' });
    expect(created.statusCode).toBe(200);
    const viewId = created.json()._id;
    const updated = await g.call('PUT', 'views/Cheap/?table_name=Fruit', {
      filters: [{ column_name: 'Price', filter_predicate: 'less', filter_term: 5 }],
      filter_conjunction: 'And',
      sorts: [{ column_key: 'Price', sort_type: 'down' }],
      hidden_columns: ['Kind', 'Picked'],
    });
    expect(updated.statusCode, updated.body).toBe(200);
    for (const query of ['view_name=Cheap', `view_id=${viewId}`]) {
      const rows = await listRows(g, `table_name=Fruit&convert_keys=true&${query}`);
      expect(names(rows)).toEqual(['banana', 'cherry', 'elder']);
      expect(rows[0]).not.toHaveProperty('Kind');
      expect(rows[0]).toHaveProperty('Ripe');
    }
    // order_by overrides the view's sorts
    expect(names(await listRows(g, 'table_name=Fruit&convert_keys=true&view_name=Cheap&order_by=Name'))).toEqual(['banana', 'cherry', 'elder']);
    expect((await g.call('GET', 'rows/?table_name=Fruit&view_name=Nope')).statusCode).toBe(404);
  });

  it('filters with a JSON body on GET filtered-rows (the Python client), names by default', async () => {
    const res = await g.t.request({
      method: 'GET',
      url: g.url('filtered-rows/?table_name=Fruit'),
      token: g.token,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        filters: [
          { column_name: 'Kind', filter_predicate: 'is', filter_term: 'tropical' },
          { column_name: 'Ripe', filter_predicate: 'is', filter_term: true },
        ],
        filter_conjunction: 'And',
      }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(names(res.json().rows)).toEqual(['banana', 'Date']);
    const or = await g.call('POST', 'filtered-rows/?table_name=Fruit', {
      filters: [
        { column_name: 'Name', filter_predicate: 'contains', filter_term: 'err' },
        { column_name: 'Price', filter_predicate: 'greater', filter_term: '5' },
      ],
      filter_conjunction: 'Or',
    });
    expect(names(or.json().rows)).toEqual(['apple', 'cherry']);
    const none = await g.t.request({ method: 'GET', url: g.url('filtered-rows/?table_name=Fruit&limit=2'), token: g.token });
    expect(none.json().rows).toHaveLength(2);
  });

  it('answers filter errors: 404 unknown column, 400 bad conjunction or predicate, 400 bad JSON', async () => {
    const call = (body: unknown) => g.call('POST', 'filtered-rows/?table_name=Fruit', body);
    const unknown = await call({ filters: [{ column_name: 'Nope', filter_predicate: 'is', filter_term: 'x' }] });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error_msg).toBe('column Nope not found');
    const conjunction = await call({ filters: [], filter_conjunction: 'Xor' });
    expect(conjunction.statusCode).toBe(400);
    const predicate = await call({ filters: [{ column_name: 'Price', filter_predicate: 'contains', filter_term: '1' }] });
    expect(predicate.statusCode).toBe(400);
    expect(predicate.json().error_msg).toContain("does not support 'contains'");
    expect((await call({ filters: 'x' })).statusCode).toBe(400);
    const badJson = await g.t.request({ method: 'GET', url: g.url('filtered-rows/?table_name=Fruit'), token: g.token, headers: { 'content-type': 'application/json' }, payload: '{nope' });
    expect(badJson.statusCode).toBe(400);
    expect(badJson.json()).toEqual({ error_msg: 'Request body is not valid JSON.' });
  });

  it('refuses to save a view with invalid filters', async () => {
    const res = await g.call('PUT', 'views/Default View/?table_name=Fruit', { filters: [{ column_name: 'Price', filter_predicate: 'nope', filter_term: 1 }] });
    expect(res.statusCode).toBe(400);
    const view = (await g.call('GET', 'views/Default View/?table_name=Fruit')).json();
    expect(view.filters).toEqual([]);
  });
});
