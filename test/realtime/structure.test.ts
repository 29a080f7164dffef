import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from '../http/rows.fixtures.js';
import { joined, listen, settle, waitFor, type LiveClient } from './live.support.js';

type Op = Record<string, unknown> & { op_type: string };

describe.each(DIALECTS)('live channel: update-dtable for structure changes (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let live: LiveClient;
  let seen = 0;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const url = await listen(t);
    t.container.dispatcher.start();
    g = await gateway(t);
    live = await joined(url, g.base.uuid, g.token);
  });
  afterAll(async () => {
    live.close();
    await t.close();
  });
  beforeEach(() => {
    seen = live.messages('update-dtable').length;
  });

  const next = async (count: number): Promise<Op[]> => {
    await waitFor(() => live.messages('update-dtable').length >= seen + count, `${count} update-dtable messages`);
    await settle(200);
    const got = live.messages('update-dtable').slice(seen) as Op[];
    expect(got.map((op) => op.op_type)).toHaveLength(count);
    seen += count;
    return got;
  };

  it('sends insert_table with the table, then rename_table', async () => {
    const table = await addTable(g, 'Orders', [{ column_name: 'Item', column_type: 'text' }]);
    const [insert] = await next(1);
    expect(insert).toMatchObject({ op_type: 'insert_table', table_id: table._id, table_data: { _id: table._id, name: 'Orders', rows: [] }, op_user: g.owner.virtualId });
    expect((insert!.table_data as { columns: unknown[] }).columns).toHaveLength(table.columns.length);
    expect((await g.call('PUT', 'tables/', { table_name: 'Orders', new_table_name: 'Purchases' })).statusCode).toBe(200);
    expect(await next(1)).toEqual([expect.objectContaining({ op_type: 'rename_table', table_id: table._id, table_name: 'Purchases' })]);
  });

  it('sends insert_column, rename_column, modify_column_data for options and delete_column', async () => {
    const res = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Stage', column_type: 'single-select', column_data: { options: [{ name: 'todo' }] } });
    expect(res.statusCode, res.body).toBe(200);
    const key = res.json().key as string;
    const [insert] = await next(1);
    expect(insert).toMatchObject({ op_type: 'insert_column', table_id: '0000', column_key: '0000', column_data: { key, name: 'Stage', type: 'single-select' } });
    expect((await g.call('PUT', 'columns/', { table_name: 'Table1', op_type: 'rename_column', column: 'Stage', new_column_name: 'Phase' })).statusCode).toBe(200);
    expect(await next(1)).toEqual([expect.objectContaining({ op_type: 'rename_column', column_key: key, new_column_name: 'Phase', old_column_name: 'Stage' })]);

    // A row naming a new option adds it: the option first, then the row, in one commit.
    await appendRows(g, 'Table1', [{ Name: 'x', Phase: 'done' }]);
    const [options, row] = await next(2);
    expect(options).toMatchObject({ op_type: 'modify_column_data', column_key: key });
    expect((options!.column_data as { options: Array<{ name: string }> }).options.map((o) => o.name)).toEqual(['todo', 'done']);
    expect(row).toMatchObject({ op_type: 'insert_row' });

    expect((await g.call('DELETE', 'columns/', { table_name: 'Table1', column: 'Phase' })).statusCode).toBe(200);
    expect(await next(1)).toEqual([expect.objectContaining({ op_type: 'delete_column', column_key: key, old_column: expect.objectContaining({ name: 'Phase' }) })]);
  });

  it('sends insert_view and delete_view', async () => {
    const created = await g.call('POST', 'views/?table_name=Table1', { name: 'Mine', type: 'table' });
    expect(created.statusCode, created.body).toBe(200);
    const [insert] = await next(1);
    expect(insert).toMatchObject({ op_type: 'insert_view', table_id: '0000', view_data: { name: 'Mine' } });
    const viewId = (insert!.view_data as { _id: string })._id;
    const deleted = await g.call('DELETE', 'views/Mine/?table_name=Table1');
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await next(1)).toEqual([expect.objectContaining({ op_type: 'delete_view', view_id: viewId, view_name: 'Mine' })]);
  });

  it('keeps commit order between structure and row changes, and sends nothing for a refused change', async () => {
    const refused = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Bad', column_type: 'no-such-type' });
    expect(refused.statusCode).toBe(400);
    await appendRows(g, 'Table1', [{ Name: 'before' }]);
    await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Size', column_type: 'number' });
    await appendRows(g, 'Table1', [{ Name: 'after' }]);
    const ops = await next(3);
    expect(ops.map((op) => op.op_type)).toEqual(['insert_row', 'insert_column', 'insert_row']);
  });
});
