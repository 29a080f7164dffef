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
  const rowOps = () => (live.messages('update-dtable') as Op[]).filter((op) => /row|link/.test(op.op_type));
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

  it('sends one insert_rows for a batch append and insert_row for a single one, each below the row before it', async () => {
    const ids = await appendRows(g, 'Tasks', [{ Title: 'one', Size: 1 }, { Title: 'two', Size: 2 }]);
    const [batch] = await next(1);
    expect(batch).toEqual({
      op_type: 'insert_rows',
      table_id: expect.any(String),
      // The table was empty: the first row goes first, each next one below the one before.
      row_ids: ['', ids[0]],
      row_insert_position: 'insert_below',
      row_datas: [
        expect.objectContaining({ _id: ids[0], [keys.Title!]: 'one', [keys.Size!]: 1 }),
        expect.objectContaining({ _id: ids[1], [keys.Title!]: 'two', [keys.Size!]: 2 }),
      ],
      links_data: [],
      table_name: 'Tasks',
      op_user: g.owner.virtualId,
      op_app: null,
      op_time: expect.any(Number),
    });
    const [third] = await appendRows(g, 'Tasks', [{ Title: 'three' }]);
    const [single] = await next(1);
    expect(single).toMatchObject({
      op_type: 'insert_row',
      table_id: batch!.table_id,
      row_id: ids[1],
      row_insert_position: 'insert_below',
      row_data: { _id: third, [keys.Title!]: 'three' },
      links_data: [],
      table_name: 'Tasks',
      row_name: 'three',
    });
  });

  it('sends modify_row / modify_rows and delete_row / delete_rows with the old values', async () => {
    const ids = await appendRows(g, 'Tasks', [{ Title: 'before', Size: 5 }, { Title: 'b2', Size: 6 }, { Title: 'b3', Size: 7 }]);
    await next(1);
    const one = await g.call('PUT', 'rows/', { table_name: 'Tasks', updates: [{ row_id: ids[0], row: { Title: 'after' } }] });
    expect(one.statusCode, one.body).toBe(200);
    const [modify] = await next(1);
    expect(modify).toMatchObject({ op_type: 'modify_row', row_id: ids[0], updated: { [keys.Title!]: 'after' }, old_row: { [keys.Title!]: 'before' } });
    const many = await g.call('PUT', 'rows/', {
      table_name: 'Tasks',
      updates: [
        { row_id: ids[1], row: { Size: 60 } },
        { row_id: ids[2], row: { Title: 'b3!' } },
      ],
    });
    expect(many.statusCode, many.body).toBe(200);
    const [modifyMany] = await next(1);
    expect(modifyMany).toEqual(
      expect.objectContaining({
        op_type: 'modify_rows',
        table_id: modify!.table_id,
        row_ids: [ids[1], ids[2]],
        updated: { [ids[1]!]: { [keys.Size!]: 60 }, [ids[2]!]: { [keys.Title!]: 'b3!' } },
        old_rows: { [ids[1]!]: { [keys.Size!]: 6 }, [ids[2]!]: { [keys.Title!]: 'b3' } },
      }),
    );
    const deleted = await g.call('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [ids[0]] });
    expect(deleted.statusCode, deleted.body).toBe(200);
    const [remove] = await next(1);
    expect(remove).toMatchObject({ op_type: 'delete_row', row_id: ids[0], deleted_row: { _id: ids[0], [keys.Title!]: 'after', [keys.Size!]: 5 } });
    const deletedMany = await g.call('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [ids[1], ids[2]] });
    expect(deletedMany.statusCode, deletedMany.body).toBe(200);
    const [removeMany] = await next(1);
    expect(removeMany).toMatchObject({ op_type: 'delete_rows', upper_row_ids: ['', ''] });
    // (In the order the rows were deleted in, which need not be the request's.)
    const byId = Object.fromEntries((removeMany!.deleted_rows as Array<{ _id: string }>).map((row) => [row._id, row]));
    expect([...(removeMany!.row_ids as string[])].sort()).toEqual([ids[1], ids[2]].sort());
    expect(byId).toEqual({
      [ids[1]!]: { _id: ids[1], [keys.Title!]: 'b2', [keys.Size!]: 60 },
      [ids[2]!]: { _id: ids[2], [keys.Title!]: 'b3!', [keys.Size!]: 7 },
    });
  });

  it('sends the changes of SQL writes in commit order, one operation per statement', async () => {
    const res = await g.call('POST', 'sql/', { sql: "INSERT INTO Tasks (Title, Size) VALUES ('by sql', 9)" });
    expect(res.statusCode, res.body).toBe(200);
    const upd = await g.call('POST', 'sql/', { sql: "UPDATE Tasks SET Size = 10 WHERE Title = 'by sql'" });
    expect(upd.statusCode, upd.body).toBe(200);
    const ops = await next(2);
    expect(ops.map((op) => op.op_type)).toEqual(['insert_row', 'modify_row']);
    expect(ops[1]).toMatchObject({ updated: { [keys.Size!]: 10 }, old_row: { [keys.Size!]: 9 } });
    expect(ops[1]!.row_id).toBe((ops[0]!.row_data as { _id: string })._id);

    const many = await g.call('POST', 'sql/', { sql: "INSERT INTO Tasks (Title, Size) VALUES ('sql a', 1), ('sql b', 2)" });
    expect(many.statusCode, many.body).toBe(200);
    // (Waited for: the anchor is the row above the first inserted row while it still exists.)
    const [insert] = await next(1);
    expect(insert).toMatchObject({ op_type: 'insert_rows' });
    const inserted = (insert!.row_datas as Array<{ _id: string }>).map((row) => row._id);
    expect(insert!.row_ids).toEqual([(ops[0]!.row_data as { _id: string })._id, inserted[0]]);
    const manyUpd = await g.call('POST', 'sql/', { sql: "UPDATE Tasks SET Size = 3 WHERE Title LIKE 'sql %'" });
    expect(manyUpd.statusCode, manyUpd.body).toBe(200);
    const manyDel = await g.call('POST', 'sql/', { sql: "DELETE FROM Tasks WHERE Title LIKE 'sql %'" });
    expect(manyDel.statusCode, manyDel.body).toBe(200);
    const batch = await next(2);
    expect(batch.map((op) => op.op_type)).toEqual(['modify_rows', 'delete_rows']);
    expect([...(batch[0]!.row_ids as string[])].sort()).toEqual([...inserted].sort());
    expect([...(batch[1]!.row_ids as string[])].sort()).toEqual([...inserted].sort());
  });

  it('sends add_link / remove_link for one pair and update_rows_links for a batch, once per write', async () => {
    await addTable(g, 'People', [{ column_name: 'Name', column_type: 'text' }]);
    const column = await g.call('POST', 'columns/', { table_name: 'Tasks', column_name: 'Owner', column_type: 'link', column_data: { table: 'Tasks', other_table: 'People' } });
    expect(column.statusCode, column.body).toBe(200);
    const data = column.json().data as { link_id: string; table_id: string; other_table_id: string };
    const tasks = await appendRows(g, 'Tasks', [{ Title: 'linked' }, { Title: 'linked too' }]);
    const people = await appendRows(g, 'People', [{ Name: 'Ann' }, { Name: 'Bob' }]);
    await next(2);
    const one = await g.call('POST', 'links/', { link_id: data.link_id, table_name: 'Tasks', other_table_name: 'People', table_row_id: tasks[0], other_table_row_id: people[0] });
    expect(one.statusCode, one.body).toBe(200);
    const [add] = await next(1);
    expect(add).toMatchObject({
      op_type: 'add_link',
      link_id: data.link_id,
      table1_id: data.table_id,
      table2_id: data.other_table_id,
      table1_row_id: tasks[0],
      table2_row_id: people[0],
    });
    const res = await g.call('POST', 'links/', { link_id: data.link_id, table_name: 'Tasks', other_table_name: 'People', other_rows_ids_map: { [tasks[0]!]: [people[1]!], [tasks[1]!]: [people[0]!, people[1]!] } });
    expect(res.statusCode, res.body).toBe(200);
    const [batch] = await next(1);
    expect(batch).toMatchObject({
      op_type: 'update_rows_links',
      link_id: data.link_id,
      table_id: data.table_id,
      other_table_id: data.other_table_id,
      is_linked_back: false,
      other_rows_ids_map: { [tasks[0]!]: [people[0], people[1]], [tasks[1]!]: [people[0], people[1]] },
      old_other_rows_ids_map: { [tasks[0]!]: [people[0]], [tasks[1]!]: [] },
    });
    expect([...(batch!.row_id_list as string[])].sort()).toEqual([...tasks].sort());
    const removed = await g.call('DELETE', 'links/', { link_id: data.link_id, table_name: 'People', other_table_name: 'Tasks', table_row_id: people[1], other_table_row_id: tasks[1] });
    expect(removed.statusCode, removed.body).toBe(200);
    const [remove] = await next(1);
    expect(remove).toMatchObject({ op_type: 'remove_link', link_id: data.link_id, table1_id: data.table_id, table1_row_id: tasks[1], table2_row_id: people[1] });
  });

  it('keeps a write longer than the dispatcher\'s batch (500 events) one operation', async () => {
    const rows = Array.from({ length: 700 }, (_, i) => ({ Title: `bulk ${i}`, Size: i }));
    const ids = await appendRows(g, 'Tasks', rows);
    const [op] = await next(1);
    expect(op).toMatchObject({ op_type: 'insert_rows', row_insert_position: 'insert_below' });
    expect((op!.row_datas as Array<{ _id: string }>).map((row) => row._id)).toEqual(ids);
    expect((op!.row_ids as string[]).slice(1)).toEqual(ids.slice(0, -1));
    await appendRows(g, 'Tasks', [{ Title: 'after the bulk' }]);
    const [after] = await next(1);
    expect(after).toMatchObject({ op_type: 'insert_row', row_id: ids[ids.length - 1] });
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
    await appendRows(g, 'Tasks', [{ Title: 'a' }]);
    await appendRows(g, 'Tasks', [{ Title: 'b' }, { Title: 'c' }]);
    await next(2);
    expect(versions).toHaveLength(2);
    expect(versions[1]).toBeGreaterThan(versions[0]!);
  });
});
