import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, gateway, readOnlyToken, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('views (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let keys: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    const table = await addTable(g, 'Tasks', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Due', column_type: 'date' },
      { column_name: 'Owner', column_type: 'collaborator' },
    ]);
    keys = Object.fromEntries(table.columns.map((c) => [c.name, c.key]));
  });
  afterAll(() => t.close());

  const view = (name: string) => `views/${encodeURIComponent(name)}/?table_name=Tasks`;

  it('lists the default view', async () => {
    const res = await g.call('GET', 'views/?table_name=Tasks');
    expect(res.statusCode).toBe(200);
    expect(res.json().views).toMatchObject([{ _id: '0000', name: 'Default View', type: 'table', is_locked: false, filters: [], sorts: [] }]);
    expect((await g.call('GET', 'views/?table_name=Nope')).statusCode).toBe(404);
  });

  it('creates a view (table name in the query, as the clients send it)', async () => {
    const res = await g.call('POST', 'views/?table_name=Tasks', { name: 'My tasks', type: 'table', is_locked: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'My tasks', type: 'table', is_locked: true, filter_conjunction: 'And', rows: [], link_rows: {} });
    expect(res.json()._id).toMatch(/^[A-Za-z0-9]{4}$/);
    const cases: Array<[unknown, string]> = [
      [{ name: 'My tasks' }, 'View My tasks exists.'],
      [{ name: '' }, 'name invalid.'],
      [{ name: 'x', type: 'kanban' }, 'type invalid.'],
      [{ name: 'x', is_locked: 'perhaps' }, 'is_locked invalid.'],
    ];
    for (const [body, message] of cases) {
      const bad = await g.call('POST', 'views/?table_name=Tasks', body);
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toEqual({ error_msg: message });
    }
  });

  it('creates a view with its filters, sorts and hidden columns, and refuses bad ones whole', async () => {
    const res = await g.call('POST', 'views/?table_name=Tasks', {
      name: 'Filtered',
      filters: [{ column_name: 'Title', filter_predicate: 'contains', filter_term: 'x' }],
      filter_conjunction: 'Or',
      sorts: [{ column_key: 'Due', sort_type: 'down' }],
      hidden_columns: ['Owner'],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'Filtered',
      filter_conjunction: 'Or',
      filters: [{ column_key: keys.Title, filter_predicate: 'contains', filter_term: 'x' }],
      hidden_columns: [keys.Owner],
    });
    expect(res.json().sorts).toHaveLength(1);
    const bad = await g.call('POST', 'views/?table_name=Tasks', { name: 'Broken', filters: [{ column_name: 'Nope', filter_predicate: 'is' }] });
    expect(bad.statusCode).toBe(404);
    expect((await g.call('GET', view('Broken'))).statusCode).toBe(404);
  });

  it('gets a view by name (URL-encoded) or id', async () => {
    const byName = await g.call('GET', view('My tasks'));
    expect(byName.json().name).toBe('My tasks');
    expect((await g.call('GET', `views/${byName.json()._id}/?table_name=Tasks`)).json().name).toBe('My tasks');
    expect((await g.call('GET', view('Nope'))).json()).toEqual({ error_msg: 'view Nope not found' });
  });

  it('updates filters, sorts, hidden columns and the name; stores filters by column key', async () => {
    const res = await g.call('PUT', view('My tasks'), {
      filters: [
        { column_name: 'Owner', filter_predicate: 'include_me' },
        { filters: [{ column_name: 'Due', filter_predicate: 'is_before', filter_term_modifier: 'today' }], filter_conjunction: 'Or' },
        {},
      ],
      filter_conjunction: 'Or',
      sorts: [{ column_name: 'Due', sort_type: 'down' }],
      hidden_columns: ['Owner'],
      name: 'Mine',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      name: 'Mine',
      filter_conjunction: 'Or',
      filters: [
        { column_key: keys.Owner, filter_predicate: 'include_me' },
        { filters: [{ column_key: keys.Due, filter_predicate: 'is_before', filter_term_modifier: 'today' }], filter_conjunction: 'Or' },
      ],
      sorts: [{ column_key: keys.Due, sort_type: 'down' }],
      hidden_columns: [keys.Owner],
    });
    // renaming a column keeps the view working
    await g.call('PUT', 'columns/', { table_name: 'Tasks', op_type: 'rename_column', column: 'Due', new_column_name: 'Deadline' });
    expect((await g.call('GET', 'rows/?table_name=Tasks&view_name=Mine')).statusCode).toBe(200);
    // sorts: [{}] clears, absent fields stay
    const cleared = await g.call('PUT', view('Mine'), { sorts: [{}] });
    expect(cleared.json().sorts).toEqual([]);
    expect(cleared.json().hidden_columns).toEqual([keys.Owner]);
  });

  it('stores the console layout on the view (an extra field), returns it in the metadata and clears it with null', async () => {
    const res = await g.call('PUT', view('Mine'), { layout: { type: 'calendar', column_key: 'Deadline' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().layout).toEqual({ type: 'calendar', column_key: keys.Due });
    const meta = await g.call('GET', 'metadata/');
    const tasks = meta.json().metadata.tables.find((tb: { name: string }) => tb.name === 'Tasks');
    expect(tasks.views.find((v: { name: string }) => v.name === 'Mine').layout).toEqual({ type: 'calendar', column_key: keys.Due });
    // other changes leave it as it is
    expect((await g.call('PUT', view('Mine'), { is_locked: false })).json().layout).toEqual({ type: 'calendar', column_key: keys.Due });
    expect((await g.call('PUT', view('Mine'), { layout: { type: 'gallery' } })).json().layout).toEqual({ type: 'gallery' });
    const cleared = await g.call('PUT', view('Mine'), { layout: null });
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json()).not.toHaveProperty('layout');
    expect((await g.call('PUT', view('Mine'), { layout: { type: 'kanban' } })).json().layout).toEqual({ type: 'kanban' });
    // deleting the layout's column leaves the layout without it
    await g.call('POST', 'columns/', { table_name: 'Tasks', column_name: 'Stage', column_type: 'single-select' });
    expect((await g.call('PUT', view('Mine'), { layout: { type: 'kanban', column_key: 'Stage' } })).json().layout.column_key).toMatch(/^\w{4}$/);
    expect((await g.call('DELETE', 'columns/', { table_name: 'Tasks', column: 'Stage' })).statusCode).toBe(200);
    expect((await g.call('GET', view('Mine'))).json().layout).toEqual({ type: 'kanban' });
  });

  it('stores column widths and order per view (extra fields, by column key): two views of a table differ; a deleted column leaves them', async () => {
    await g.call('POST', 'views/?table_name=Tasks', { name: 'Widths' });
    const res = await g.call('PUT', view('Mine'), { column_widths: { Title: 320, [keys.Owner!]: 90 }, column_order: ['Owner', 'Title'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().column_widths).toEqual({ [keys.Title!]: 320, [keys.Owner!]: 90 });
    expect(res.json().column_order).toEqual([keys.Owner, keys.Title]);
    expect((await g.call('PUT', view('Widths'), { column_widths: { Title: 150 } })).json().column_widths).toEqual({ [keys.Title!]: 150 });
    const meta = await g.call('GET', 'metadata/');
    const views = meta.json().metadata.tables.find((tb: { name: string }) => tb.name === 'Tasks').views as Array<Record<string, unknown>>;
    expect(views.find((v) => v.name === 'Mine')!.column_widths).toEqual({ [keys.Title!]: 320, [keys.Owner!]: 90 });
    expect(views.find((v) => v.name === 'Widths')!.column_widths).toEqual({ [keys.Title!]: 150 });
    expect(views.find((v) => v.name === 'Widths')).not.toHaveProperty('column_order');
    // other changes leave them; the table's columns keep their own widths
    expect((await g.call('PUT', view('Mine'), { is_locked: false })).json().column_order).toEqual([keys.Owner, keys.Title]);
    const columns = meta.json().metadata.tables.find((tb: { name: string }) => tb.name === 'Tasks').columns as Array<{ key: string; width?: number }>;
    expect(columns.find((c) => c.key === keys.Title)?.width).not.toBe(320);
    // a deleted column leaves the view's widths and order
    await g.call('POST', 'columns/', { table_name: 'Tasks', column_name: 'Wide', column_type: 'text' });
    const wide = (await g.call('PUT', view('Mine'), { column_widths: { Title: 320, Wide: 500 }, column_order: ['Wide', 'Title'] })).json();
    expect(Object.keys(wide.column_widths)).toHaveLength(2);
    expect((await g.call('DELETE', 'columns/', { table_name: 'Tasks', column: 'Wide' })).statusCode).toBe(200);
    const after = (await g.call('GET', view('Mine'))).json();
    expect(after.column_widths).toEqual({ [keys.Title!]: 320 });
    expect(after.column_order).toEqual([keys.Title]);
    const cleared = (await g.call('PUT', view('Mine'), { column_widths: null, column_order: null })).json();
    expect(cleared).not.toHaveProperty('column_widths');
    expect(cleared).not.toHaveProperty('column_order');
    for (const [body, message] of [
      [{ column_widths: [1] }, 'column_widths invalid.'],
      [{ column_widths: { Title: 10 } }, 'column_widths.Title: a whole number of pixels from 20 to 2000.'],
      [{ column_widths: { Title: '100' } }, 'column_widths.Title: a whole number of pixels from 20 to 2000.'],
      [{ column_widths: { Nope: 100 } }, 'column_widths: column Nope not found.'],
      [{ column_order: 'Title' }, 'column_order invalid.'],
      [{ column_order: ['Title', 'Nope'] }, 'column_order: column Nope not found.'],
      [{ column_order: ['Title', keys.Title] }, 'column_order: a column is named twice.'],
    ] as Array<[unknown, string]>) {
      const refused = await g.call('PUT', view('Mine'), body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(refused.json().error_msg).toBe(message);
    }
    expect((await g.call('GET', view('Mine'))).json()).not.toHaveProperty('column_widths');
    expect((await g.call('DELETE', view('Widths'))).statusCode).toBe(200);
  });

  it('refuses invalid view changes with 400 and leaves the view as it was', async () => {
    const cases: Array<[unknown, string | RegExp]> = [
      [{ name: 'Default View' }, 'View Default View exists.'],
      [{ filter_conjunction: 'Xor' }, 'filter_conjunction invalid'],
      [{ filters: 'x' }, 'filters invalid'],
      [{ filters: [{ column_name: 'Title', filter_predicate: 'greater', filter_term: 1 }] }, /does not support 'greater'/],
      [{ sorts: [{ column_key: 'Nope' }] }, 'sorts.0: column Nope not found.'],
      [{ sorts: [{ column_key: 'Title', sort_type: 'sideways' }] }, 'sorts.0.sort_type invalid.'],
      [{ hidden_columns: ['Nope'] }, 'hidden_columns: column Nope not found.'],
      [{ hidden_columns: 'Title' }, 'hidden_columns invalid.'],
      [{ is_locked: 3 }, 'is_locked invalid.'],
      [{ layout: 'kanban' }, 'layout invalid.'],
      [{ layout: { type: 'kanban', extra: 1 } }, 'layout invalid.'],
      [{ layout: { type: 'timeline' } }, 'layout.type invalid.'],
      [{ layout: { type: 'calendar', column_key: 'Nope' } }, 'layout: column Nope not found.'],
      [{ name: 'Renamed', layout: { type: 'calendar', column_key: 7 } }, 'layout: column 7 not found.'],
    ];
    const before = (await g.call('GET', view('Mine'))).json();
    for (const [body, message] of cases) {
      const res = await g.call('PUT', view('Mine'), body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      if (typeof message === 'string') expect(res.json()).toEqual({ error_msg: message });
      else expect(res.json().error_msg).toMatch(message);
    }
    const filterOnUnknown = await g.call('PUT', view('Mine'), { filters: [{ column_name: 'Nope', filter_predicate: 'is_empty' }] });
    expect(filterOnUnknown.statusCode).toBe(404);
    expect((await g.call('GET', view('Mine'))).json()).toEqual(before);
  });

  it('deletes a view but never the last one', async () => {
    for (const name of ['Mine', 'Filtered']) {
      expect((await g.call('DELETE', view(name))).json()).toEqual({ success: true });
      expect((await g.call('GET', view(name))).statusCode).toBe(404);
    }
    const last = await g.call('DELETE', view('Default View'));
    expect(last.statusCode).toBe(400);
    expect(last.json()).toEqual({ error_msg: 'The last view of a table cannot be deleted.' });
  });

  it('refuses view writes with a read-only token', async () => {
    const token = await readOnlyToken(g);
    expect((await g.call('GET', 'views/?table_name=Tasks', undefined, token)).statusCode).toBe(200);
    expect((await g.call('POST', 'views/?table_name=Tasks', { name: 'Z' }, token)).statusCode).toBe(403);
    expect((await g.call('PUT', view('Default View'), { name: 'Z' }, token)).statusCode).toBe(403);
    expect((await g.call('DELETE', view('Default View'), undefined, token)).statusCode).toBe(403);
  });
});
