import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createBase, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from '../http/rows.fixtures.js';
import { joined, listen, settle, waitFor, type LiveClient } from './live.support.js';

type Op = Record<string, unknown> & { op_type: string };

describe.each(DIALECTS)('live channel: update-dtable for row changes (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let url: string;
  let live: LiveClient;
  let keys: Record<string, string>;
  const clients: LiveClient[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    url = await listen(t);
    t.container.dispatcher.start();
    g = await gateway(t);
    const table = await addTable(g, 'Tasks', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Size', column_type: 'number' },
    ]);
    keys = Object.fromEntries(table.columns.map((c) => [c.name, c.key]));
    live = await joined(url, g.base.uuid, g.token);
    clients.push(live);
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  /** The row operations that arrive (structure ones are covered in their own file). */
  const rowOps = () => (live.messages('update-dtable') as Op[]).filter((op) => /row|links/.test(op.op_type));
  let seen = 0;
  beforeEach(() => {
    seen = rowOps().length;
  });
  const next = async (count: number): Promise<Op[]> => {
    await waitFor(() => rowOps().length >= seen + count, `${count} update-dtable messages`);
    await settle(150);
    const got = rowOps().slice(seen);
    expect(got).toHaveLength(count); // and no more than that
    seen += count;
    return got;
  };

  it('sends insert_row for each appended row, in order, with the row keyed by column key', async () => {
    const ids = await appendRows(g, 'Tasks', [{ Title: 'one', Size: 1 }, { Title: 'two', Size: 2 }]);
    const ops = await next(2);
    expect(ops.map((op) => op.op_type)).toEqual(['insert_row', 'insert_row']);
    expect(ops[0]).toMatchObject({
      table_id: expect.any(String),
      row_id: '',
      row_insert_position: 'insert_below',
      row_data: { _id: ids[0], [keys.Title!]: 'one', [keys.Size!]: 1 },
      table_name: 'Tasks',
      op_user: g.owner.virtualId,
    });
    expect((ops[1]!.row_data as { _id: string })._id).toBe(ids[1]);
  });

  it('sends modify_row with the changed cells new and old, and delete_row with the old row', async () => {
    const [id] = await appendRows(g, 'Tasks', [{ Title: 'before', Size: 5 }]);
    await next(1);
    const updated = await g.call('PUT', 'rows/', { table_name: 'Tasks', updates: [{ row_id: id, row: { Title: 'after' } }] });
    expect(updated.statusCode, updated.body).toBe(200);
    const [modify] = await next(1);
    expect(modify).toMatchObject({ op_type: 'modify_row', row_id: id, updated: { [keys.Title!]: 'after' }, old_row: { [keys.Title!]: 'before' } });
    const deleted = await g.call('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [id] });
    expect(deleted.statusCode, deleted.body).toBe(200);
    const [remove] = await next(1);
    expect(remove).toMatchObject({ op_type: 'delete_row', row_id: id, deleted_row: { _id: id, [keys.Title!]: 'after', [keys.Size!]: 5 } });
  });

  it('sends the changes of SQL writes in commit order', async () => {
    const res = await g.call('POST', 'sql/', { sql: "INSERT INTO Tasks (Title, Size) VALUES ('by sql', 9)" });
    expect(res.statusCode, res.body).toBe(200);
    const upd = await g.call('POST', 'sql/', { sql: "UPDATE Tasks SET Size = 10 WHERE Title = 'by sql'" });
    expect(upd.statusCode, upd.body).toBe(200);
    const ops = await next(2);
    expect(ops.map((op) => op.op_type)).toEqual(['insert_row', 'modify_row']);
    expect(ops[1]).toMatchObject({ updated: { [keys.Size!]: 10 }, old_row: { [keys.Size!]: 9 } });
    expect(ops[1]!.row_id).toBe((ops[0]!.row_data as { _id: string })._id);
  });

  it('sends update_links for each row whose links changed', async () => {
    await addTable(g, 'People', [{ column_name: 'Name', column_type: 'text' }]);
    const column = await g.call('POST', 'columns/', { table_name: 'Tasks', column_name: 'Owner', column_type: 'link', column_data: { table: 'Tasks', other_table: 'People' } });
    expect(column.statusCode, column.body).toBe(200);
    const linkId = column.json().data.link_id as string;
    const [task] = await appendRows(g, 'Tasks', [{ Title: 'linked' }]);
    const [person] = await appendRows(g, 'People', [{ Name: 'Ann' }]);
    await next(2);
    const res = await g.call('POST', 'links/', { link_id: linkId, table_name: 'Tasks', other_table_name: 'People', other_rows_ids_map: { [task!]: [person!] } });
    expect(res.statusCode, res.body).toBe(200);
    const ops = await next(2);
    expect(ops.map((op) => op.op_type)).toEqual(['update_links', 'update_links']);
    const byRow = Object.fromEntries(ops.map((op) => [op.row_id, op]));
    expect(byRow[task!]).toMatchObject({ link_id: linkId, other_rows_ids: [person], old_other_rows_ids: [], is_linked_back: false, change: 'add_link' });
    expect(byRow[person!]).toMatchObject({ link_id: linkId, other_rows_ids: [task], is_linked_back: true });
  });

  it('sends nothing for a write refused with 400', async () => {
    const refused = await g.call('POST', 'rows/', { table_name: 'No such table', rows: [{ Title: 'x' }] });
    expect(refused.statusCode).toBeGreaterThanOrEqual(400);
    expect(refused.statusCode).toBeLessThan(500);
    const tooBig = await g.call('PUT', 'rows/', { table_name: 'Tasks', updates: 'not a list' });
    expect(tooBig.statusCode).toBe(400);
    await appendRows(g, 'Tasks', [{ Title: 'after the refusals' }]);
    const [op] = await next(1);
    expect(op).toMatchObject({ op_type: 'insert_row', row_data: { [keys.Title!]: 'after the refusals' } });
  });

  it('sends a base only its own changes, with the event id as version', async () => {
    const other = await createBase(t, g.owner);
    const otherLive = await joined(url, other.uuid, await baseToken(t, g.owner, other));
    clients.push(otherLive);
    await appendRows(g, 'Tasks', [{ Title: 'mine' }]);
    await next(1);
    expect(otherLive.messages('update-dtable')).toEqual([]);
    const versions: number[] = [];
    live.socket.on('update-dtable', (_op: string, version: number) => versions.push(version));
    await appendRows(g, 'Tasks', [{ Title: 'a' }, { Title: 'b' }]);
    await next(2);
    expect(versions).toHaveLength(2);
    expect(versions[1]).toBeGreaterThan(versions[0]!);
  });
});
