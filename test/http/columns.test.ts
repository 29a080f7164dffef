import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, listRows, readOnlyToken, type Gateway } from './rows.fixtures.js';

type Column = { key: string; name: string; type: string; width: number; frozen?: boolean; data: Record<string, unknown> | null };

describe.each(DIALECTS)('columns (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Stock', [
      { column_name: 'Item', column_type: 'text' },
      { column_name: 'Count', column_type: 'number' },
      { column_name: 'Label', column_type: 'text' },
    ]);
  });
  afterAll(() => t.close());

  const columns = async (table = 'Stock'): Promise<Column[]> => (await g.call('GET', `columns/?table_name=${table}`)).json().columns;
  const names = async (table = 'Stock') => (await columns(table)).map((c) => c.name);

  it('lists columns, only the visible ones of a view', async () => {
    expect(await names()).toEqual(['Item', 'Count', 'Label']);
    await g.call('POST', 'views/?table_name=Stock', { name: 'Slim' });
    await g.call('PUT', 'views/Slim/?table_name=Stock', { hidden_columns: ['Label'] });
    const res = await g.call('GET', 'columns/?table_name=Stock&view_name=Slim');
    expect(res.json().columns.map((c: Column) => c.name)).toEqual(['Item', 'Count']);
    expect((await g.call('GET', 'columns/?table_name=Nope')).statusCode).toBe(404);
  });

  it('inserts a column at the end or after an anchor', async () => {
    const res = await g.call('POST', 'columns/', { table_name: 'Stock', column_name: 'Price', column_type: 'number', column_data: { format: 'dollar' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ name: 'Price', type: 'number', width: 200, data: { format: 'dollar' }, permission_type: '' });
    expect(res.json().key).toMatch(/^[A-Za-z0-9]{4}$/);
    await g.call('POST', 'columns/', { table_name: 'Stock', column_name: 'Note', column_type: 'long-text', anchor_column: 'Item' });
    expect(await names()).toEqual(['Item', 'Note', 'Count', 'Label', 'Price']);
  });

  it('refuses duplicate names, bad types and bad anchors', async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ column_name: 'Count', column_type: 'text' }, 400, 'Column Count exists.'],
      [{ column_name: 'X', column_type: 'nope' }, 400, 'column_type nope invalid.'],
      [{ column_name: 'X', column_type: 'link-formula' }, 400, 'column_data.formula invalid: one of lookup, rollup, count_links, findmin, findmax.'],
      [{ column_name: 'X', column_type: 'department-single-select' }, 400, 'column type department-single-select is not supported.'],
      [{ column_name: '', column_type: 'text' }, 400, 'column_name invalid.'],
      [{ column_name: 'X', column_type: 'text', anchor_column: 'Nope' }, 404, 'column Nope not found'],
      [{ column_name: 'X', column_type: 'single-select', column_data: { options: [{ name: 'a' }, { name: 'a' }] } }, 400, 'option a exists.'],
      [{ column_name: 'X', column_type: 'single-select', column_data: { options: [{ name: 'a', color: 'red' }] } }, 400, 'column_data.options.0.color invalid.'],
      [{ column_name: 'X', column_type: 'link', column_data: { table: 'Stock', other_table: 'Nope' } }, 400, 'column_data.other_table invalid.'],
    ];
    for (const [body, status, message] of cases) {
      const res = await g.call('POST', 'columns/', { table_name: 'Stock', ...body });
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json()).toEqual({ error_msg: message });
    }
  });

  it('adds a link column with its twin in the other table', async () => {
    const res = await g.call('POST', 'columns/', { table_name: 'Stock', column_name: 'Supplier', column_type: 'link', column_data: { table: 'Stock', other_table: 'Table1' } });
    expect(res.statusCode).toBe(200);
    const link = res.json();
    expect(link.data).toMatchObject({ table_id: expect.any(String), other_table_id: '0000', link_id: expect.stringMatching(/^[A-Za-z0-9]{4}$/) });
    const twin = (await columns('Table1')).find((c) => c.type === 'link')!;
    expect(twin.name).toBe('Stock');
    expect(twin.data).toMatchObject({ link_id: link.data.link_id, table_id: link.data.table_id, other_table_id: '0000' });
  });

  it('appends columns in a batch, all or nothing', async () => {
    const res = await g.call('POST', 'batch-append-columns/', {
      table_name: 'Stock',
      columns: [
        { column_name: 'B1', column_type: 'checkbox' },
        { column_name: 'B2', column_type: 'rate', column_data: { rate_max_number: 10 } },
      ],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().columns.map((c: Column) => [c.name, c.type])).toEqual([
      ['B1', 'checkbox'],
      ['B2', 'rate'],
    ]);
    for (const bad of [
      [{ column_name: 'B3', column_type: 'text' }, { column_name: 'L', column_type: 'link', column_data: { other_table: 'Table1' } }],
      [{ column_name: 'B3', column_type: 'text' }, { column_name: 'A', column_type: 'auto-number' }],
      [{ column_name: 'B3', column_type: 'text' }, { column_name: 'B1', column_type: 'text' }],
    ]) {
      expect((await g.call('POST', 'batch-append-columns/', { table_name: 'Stock', columns: bad })).statusCode).toBe(400);
    }
    expect((await g.call('POST', 'batch-append-columns/', { table_name: 'Stock', columns: [] })).statusCode).toBe(400);
    expect(await names()).not.toContain('B3');
  });

  it('renames, resizes, freezes and moves columns', async () => {
    const put = (body: Record<string, unknown>) => g.call('PUT', 'columns/', { table_name: 'Stock', ...body });
    expect((await put({ op_type: 'rename_column', column: 'Label', new_column_name: 'Tag' })).json()).toMatchObject({ name: 'Tag' });
    expect((await put({ op_type: 'rename_column', column: 'Tag', new_column_name: 'Count' })).json()).toEqual({ error_msg: 'Column Count exists.' });
    const key = (await columns()).find((c) => c.name === 'Tag')!.key;
    expect((await put({ op_type: 'resize_column', column: key, new_column_width: 320 })).json()).toMatchObject({ key, width: 320 });
    expect((await put({ op_type: 'resize_column', column: key, new_column_width: 'wide' })).statusCode).toBe(400);
    expect((await put({ op_type: 'freeze_column', column: 'Tag', frozen: true })).json()).toMatchObject({ frozen: true });
    expect((await put({ op_type: 'freeze_column', column: 'Tag', frozen: 'maybe' })).statusCode).toBe(400);
    expect((await put({ op_type: 'move_column', column: 'Tag', target_column: 'Item' })).statusCode).toBe(200);
    expect((await names()).slice(0, 2)).toEqual(['Item', 'Tag']);
    expect((await put({ op_type: 'move_column', column: 'Item', target_column: 'Tag' })).json()).toEqual({ error_msg: 'The first column cannot be moved.' });
    expect((await put({ op_type: 'move_column', column: 'Tag', target_column: 'Nope' })).statusCode).toBe(400);
    expect((await put({ op_type: 'explode_column', column: 'Tag' })).json()).toEqual({ error_msg: 'op_type invalid.' });
    expect((await put({ op_type: 'rename_column', column: 'Nope', new_column_name: 'x' })).statusCode).toBe(404);
  });

  it('converts stored values when the type changes; values that do not convert are cleared', async () => {
    const ids = await appendRows(g, 'Stock', [
      { Item: 'a', Count: 12, Tag: '7' },
      { Item: 'b', Count: 3.5, Tag: 'seven' },
      { Item: 'c', Tag: 'red' },
    ]);
    const put = (body: Record<string, unknown>) => g.call('PUT', 'columns/', { table_name: 'Stock', op_type: 'modify_column_type', ...body });
    expect((await put({ column: 'Count', new_column_type: 'text' })).json()).toMatchObject({ name: 'Count', type: 'text', data: null });
    expect((await put({ column: 'Tag', new_column_type: 'number' })).json()).toMatchObject({ type: 'number', data: { format: 'number' } });
    let rows = await listRows(g, 'table_name=Stock&convert_keys=true');
    const byId = (id: string) => rows.find((r) => r._id === id)!;
    expect([byId(ids[0]!).Count, byId(ids[1]!).Count]).toEqual(['12', '3.5']);
    expect([byId(ids[0]!).Tag, byId(ids[1]!).Tag, byId(ids[2]!).Tag]).toEqual([7, null, null]);
    expect((await put({ column: 'Count', new_column_type: 'single-select' })).statusCode).toBe(200);
    rows = await listRows(g, 'table_name=Stock&convert_keys=true');
    expect(byId(ids[0]!).Count).toBe('12');
    const options = (await columns()).find((c) => c.name === 'Count')!.data!.options as Array<{ name: string }>;
    expect(options.map((o) => o.name)).toEqual(['12', '3.5']);
    expect((await put({ column: 'Item', new_column_type: 'checkbox' })).statusCode).toBe(400);
    expect((await put({ column: 'Supplier', new_column_type: 'text' })).statusCode).toBe(400);
    expect((await put({ column: 'Count', new_column_type: 'formula' })).statusCode).toBe(400);
  });

  it('keeps a view listable when a filtered column changes type: the filters that no longer fit go', async () => {
    await addTable(g, 'Retype', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Score', column_type: 'number' },
    ]);
    await appendRows(g, 'Retype', [{ Title: 'a', Score: 7 }, { Title: 'b', Score: 2 }]);
    const view = await g.call('POST', 'views/?table_name=Retype', {
      name: 'High',
      filters: [
        { column_name: 'Score', filter_predicate: 'greater', filter_term: 5 },
        { column_name: 'Title', filter_predicate: 'is_not_empty' },
      ],
    });
    expect(view.statusCode, view.body).toBe(200);
    expect(await listRows(g, 'table_name=Retype&view_name=High')).toHaveLength(1);
    const retype = await g.call('PUT', 'columns/', { table_name: 'Retype', op_type: 'modify_column_type', column: 'Score', new_column_type: 'text' });
    expect(retype.statusCode, retype.body).toBe(200);
    expect(await listRows(g, 'table_name=Retype&view_name=High')).toHaveLength(2);
    const filters = (await g.call('GET', 'views/High/?table_name=Retype')).json().filters as Array<{ filter_predicate: string }>;
    expect(filters.map((f) => f.filter_predicate)).toEqual(['is_not_empty']);
  });

  it('numbers existing rows when a column becomes auto-number', async () => {
    const res = await g.call('POST', 'columns/', { table_name: 'Stock', column_name: 'Seq', column_type: 'auto-number', column_data: { digits: 2 } });
    expect(res.statusCode).toBe(200);
    const rows = await listRows(g, 'table_name=Stock&convert_keys=true');
    expect(rows.map((r) => r.Seq)).toEqual(['01', '02', '03']);
    const [next] = await appendRows(g, 'Stock', [{ Item: 'd' }]);
    expect((await g.call('GET', `rows/${next}/?table_name=Stock&convert_keys=true`)).json().Seq).toBe('04');
  });

  it('deletes a column, its cells and the view references to it', async () => {
    await g.call('PUT', 'views/Slim/?table_name=Stock', {
      filters: [{ column_name: 'Tag', filter_predicate: 'is_not_empty' }, { column_name: 'Item', filter_predicate: 'is_not_empty' }],
      sorts: [{ column_key: 'Tag', sort_type: 'up' }],
    });
    const tagKey = (await columns()).find((c) => c.name === 'Tag')!.key;
    expect((await g.call('DELETE', 'columns/', { table_name: 'Stock', column: 'Tag' })).json()).toEqual({ success: true });
    expect(await names()).not.toContain('Tag');
    const view = (await g.call('GET', 'views/Slim/?table_name=Stock')).json();
    expect(view.sorts).toEqual([]);
    expect(view.hidden_columns).not.toContain(tagKey);
    expect(view.filters).toHaveLength(1);
    const stored = await t.container.db.selectFrom('base_rows').select('data').where('base_id', '=', g.base.id).execute();
    for (const r of stored) expect(JSON.stringify(r.data)).not.toContain(`"${tagKey}"`);
    expect((await g.call('DELETE', 'columns/', { table_name: 'Stock', column: 'Item' })).json()).toEqual({ error_msg: 'The first column cannot be deleted.' });
    expect((await g.call('DELETE', 'columns/', { table_name: 'Stock', column: 'Nope' })).statusCode).toBe(404);
  });

  it('deletes a link column together with its twin', async () => {
    expect((await g.call('DELETE', 'columns/', { table_name: 'Table1', column: 'Stock' })).statusCode).toBe(200);
    expect((await columns()).some((c) => c.type === 'link')).toBe(false);
    expect((await columns('Table1')).some((c) => c.type === 'link')).toBe(false);
  });

  it('refuses column writes with a read-only token', async () => {
    const token = await readOnlyToken(g);
    expect((await g.call('GET', 'columns/?table_name=Stock', undefined, token)).statusCode).toBe(200);
    expect((await g.call('POST', 'columns/', { table_name: 'Stock', column_name: 'Z', column_type: 'text' }, token)).statusCode).toBe(403);
    expect((await g.call('POST', 'batch-append-columns/', { table_name: 'Stock', columns: [] }, token)).statusCode).toBe(403);
  });
});
