import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createTestApp, type TestApp } from '../helpers/index.js';
import { baseWithRoles, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, gateway, listRows, through, type Gateway } from './rows.fixtures.js';

type Op = { op_id: number; author: string; app: string | null; op_time: number; op_type: string; operation: string; reverts: number | null };

describe.each(DIALECTS)('history: operation log and restore (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;
  let authorsId: string;
  let linkId: string;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const { owner, base, roles: r } = await baseWithRoles(t);
    roles = r;
    g = through(t, { owner, base, token: roles.tokens.owner });
    await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Score', column_type: 'number' });
    authorsId = (await addTable(g, 'Authors', [{ column_name: 'Name', column_type: 'text' }]))._id;
    const column = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'By', column_type: 'link', column_data: { table: 'Table1', other_table: 'Authors' } });
    linkId = column.json().data.link_id;
  });
  afterAll(() => t.close());

  const ops = async (query = '', token = roles.tokens.owner): Promise<Op[]> => {
    const res = await g.call('GET', `operations/${query}`, undefined, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().operations;
  };
  const latest = async () => (await ops('?per_page=1'))[0]!;
  const cells = async () => Object.fromEntries((await listRows(g, 'table_name=Table1&convert_keys=true')).map((r) => [r.Name, r]));
  const restore = (opId: number, body: object = {}, token = roles.tokens.owner) => g.call('PUT', `restore-operations/${opId}/`, body, token);

  it('logs one operation per write with its author, source and only the changed cells', async () => {
    const [a, b] = await appendRows(g, 'Table1', [{ Name: 'Ann', Score: 1 }, { Name: 'Bob', Score: 2 }]);
    const insert = await latest();
    expect(insert).toMatchObject({ op_type: 'insert_rows', app: null, reverts: null });
    expect(insert.author).toMatch(/@auth\.local$/);
    expect(JSON.parse(insert.operation)).toMatchObject({ op_type: 'insert_rows', table_id: '0000', row_ids: [a, b] });
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: a, row: { Score: 5 } }] });
    const modify = JSON.parse((await latest()).operation);
    expect(modify.op_type).toBe('modify_row');
    expect(Object.values(modify.updated)).toEqual([5]);
    expect(Object.values(modify.old_row)).toEqual([1]);
    // An API-Token writes under its app_name.
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: b, row: { Score: 3 } }] }, roles.tokens['api-rw']);
    expect(await latest()).toMatchObject({ author: 'roles-rw', app: 'roles-rw', op_type: 'modify_row' });
  });

  it('filters by row, table, author and time, and pages by offset and keyset', async () => {
    const all = await ops('?per_page=100');
    expect(all.map((o) => o.op_id)).toEqual([...all.map((o) => o.op_id)].sort((x, y) => y - x));
    const rowId = JSON.parse(all.find((o) => o.op_type === 'insert_rows')!.operation).row_ids[0];
    expect((await ops(`?row_id=${rowId}`)).map((o) => o.op_type)).toEqual(['modify_row', 'insert_rows']);
    expect((await ops('?author=roles-rw')).length).toBe(1);
    expect((await ops(`?table_id=${authorsId}`)).every((o) => JSON.parse(o.operation).table_id === authorsId)).toBe(true);
    expect(await ops(`?start_time=${t.clock.now() + 60_000}`)).toEqual([]);
    const page2 = await ops('?per_page=2&page=2');
    expect(page2.map((o) => o.op_id)).toEqual(all.slice(2, 4).map((o) => o.op_id));
    expect((await ops(`?per_page=2&before_op_id=${all[1]!.op_id}`)).map((o) => o.op_id)).toEqual(all.slice(2, 4).map((o) => o.op_id));
    const db = (await g.call('GET', 'db-operations/?per_page=1')).json().operations[0];
    expect(db).toMatchObject({ dtable_uuid: g.base.uuid, id: all[0]!.op_id, op_time: Math.floor(all[0]!.op_time / 1000), op_type: 'modify_row' });
  });

  it('refuses bad paging, times and ids with 400 and unknown operations with 404', async () => {
    for (const q of ['?per_page=0', '?per_page=101', '?page=x', '?start_time=yesterday', '?page=100000&per_page=100']) {
      const res = await g.call('GET', `operations/${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error_msg).toBeTypeOf('string');
    }
    expect((await restore(999_999)).statusCode).toBe(404);
    expect((await g.call('PUT', 'restore-operations/abc/', {})).statusCode).toBe(400);
  });

  it('reverts an update as a new operation, and refuses a conflicting revert with 409 unless overwrite', async () => {
    const [c] = await appendRows(g, 'Table1', [{ Name: 'Cid', Score: 10 }]);
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: c, row: { Score: 11 } }] });
    const first = await latest();
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: c, row: { Score: 12 } }] });
    const conflict = await restore(first.op_id);
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().error_msg).toMatch(new RegExp(`operation ${first.op_id + 1} changed row ${c}`));
    expect((await cells()).Cid!.Score).toBe(12);
    const res = await restore(first.op_id, { overwrite: true });
    expect(res.statusCode, res.body).toBe(200);
    expect((await cells()).Cid!.Score).toBe(10);
    const revert = await latest();
    expect(revert).toMatchObject({ op_type: 'modify_row', reverts: first.op_id });
    // Reverting the revert is allowed (nothing changed the cell since): redo.
    expect((await restore(revert.op_id)).statusCode).toBe(200);
    expect((await cells()).Cid!.Score).toBe(12);
  });

  it('reverts an insert (the rows go) and a batch update as one write', async () => {
    await appendRows(g, 'Table1', [{ Name: 'Dan' }, { Name: 'Eve' }]);
    const insert = await latest();
    expect((await restore(insert.op_id)).statusCode).toBe(200);
    expect(Object.keys(await cells())).not.toContain('Dan');
    expect(await latest()).toMatchObject({ op_type: 'delete_rows', reverts: insert.op_id });
    const ids = await appendRows(g, 'Table1', [{ Name: 'F1', Score: 1 }, { Name: 'F2', Score: 2 }, { Name: 'F3', Score: 3 }]);
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: ids.map((id) => ({ row_id: id, row: { Score: 100 } })) });
    const batch = await latest();
    expect(batch.op_type).toBe('modify_rows');
    expect((await restore(batch.op_id)).statusCode).toBe(200);
    const now = await cells();
    expect([now.F1!.Score, now.F2!.Score, now.F3!.Score]).toEqual([1, 2, 3]);
    expect(await latest()).toMatchObject({ op_type: 'modify_rows', reverts: batch.op_id });
  });

  it('reverts a delete with the row id, its links and its comments', async () => {
    const [book] = await appendRows(g, 'Table1', [{ Name: 'Dune', Score: 7 }]);
    const [author] = await appendRows(g, 'Authors', [{ Name: 'Herbert' }]);
    await g.call('POST', 'links/', { link_id: linkId, table_name: 'Table1', other_table_name: 'Authors', other_rows_ids_map: { [book!]: [author!] } });
    const comment = await g.call('POST', 'comments/', { table_id: '0000', row_id: book, comment: 'keep this' });
    expect(comment.statusCode, comment.body).toBe(200);
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [book] });
    const del = await latest();
    expect(del.op_type).toBe('delete_row');
    expect((await restore(del.op_id)).statusCode).toBe(200);
    const row = (await g.call('GET', `rows/${book}/?table_name=Table1&convert_keys=true`)).json();
    expect(row).toMatchObject({ _id: book, Name: 'Dune', Score: 7, By: [{ row_id: author, display_value: 'Herbert' }] });
    const comments = (await g.call('GET', `comments/?row_id=${book}`)).json();
    expect(JSON.stringify(comments)).toContain('keep this');
  });

  it('reverts a link change', async () => {
    const [book] = await appendRows(g, 'Table1', [{ Name: 'Emma' }]);
    const [author] = await appendRows(g, 'Authors', [{ Name: 'Austen' }]);
    await g.call('POST', 'links/', { link_id: linkId, table_name: 'Table1', other_table_name: 'Authors', other_rows_ids_map: { [book!]: [author!] } });
    const link = await latest();
    expect(link.op_type).toBe('update_links');
    expect((await restore(link.op_id)).statusCode).toBe(200);
    expect((await cells()).Emma!.By).toEqual([]);
  });

  it('logs structure changes; a column add is restored (the column goes), a view change is refused with 400', async () => {
    await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Note', column_type: 'text' });
    const op = await latest();
    expect(op.op_type).toBe('insert_column');
    expect(JSON.parse(op.operation)).toMatchObject({ op_type: 'insert_column', table_id: '0000' });
    expect((await restore(op.op_id)).statusCode).toBe(200);
    const columns = (await g.call('GET', 'columns/?table_name=Table1')).json().columns.map((c: { name: string }) => c.name);
    expect(columns).not.toContain('Note');
    await g.call('POST', 'views/?table_name=Table1', { name: 'Logged view' });
    expect((await restore((await latest()).op_id)).statusCode).toBe(400);
  });

  it('shows history to every reader; only the owner and admins restore', async () => {
    for (const role of ['r', 'api-r', 'link'] as const) expect((await ops('?per_page=1', roles.tokens[role])).length, role).toBe(1);
    await appendRows(g, 'Table1', [{ Name: 'Perm' }]);
    const op = await latest();
    for (const role of ['rw', 'api-rw'] as const) {
      const res = await restore(op.op_id, {}, roles.tokens[role]);
      expect(res.statusCode, role).toBe(403);
      expect(res.json().error_msg).toMatch(/owner or an admin/);
    }
    expect((await restore(op.op_id, {}, roles.tokens.r)).statusCode).toBe(403);
    expect((await restore(op.op_id, {}, roles.tokens.admin)).statusCode).toBe(200);
  });

  it('lists a row’s history with its comments, and the base’s recent activity', async () => {
    const [row] = await appendRows(g, 'Table1', [{ Name: 'Hist', Score: 1 }]);
    t.clock.advance(1000);
    await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: row, row: { Score: 2 } }] });
    t.clock.advance(1000);
    await g.call('POST', 'comments/', { table_id: '0000', row_id: row, comment: 'why 2?' });
    const res = await g.call('GET', `activities/?row_id=${row}&per_page=10`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.total_count).toBe(3);
    expect(body.activities.map((a: { op_type: string }) => a.op_type)).toEqual(['add_comment', 'modify_row', 'insert_row']);
    expect(body.activities[1]).toMatchObject({ row_id: row, dtable_uuid: g.base.uuid, detail: { table_name: 'Table1', row_name: 'Hist', row_data: [{ column_name: 'Score', column_type: 'number', value: 2, old_value: 1 }] } });
    expect(body.activities[0].detail.comment).toBe('why 2?');
    const feed = (await g.call('GET', 'activities/?per_page=2')).json();
    expect(feed.activities[0]).toMatchObject({ row_id: row, op_type: 'modify_row' });
  });

  it('prunes operations older than OPERATION_LOG_RETENTION_DAYS', async () => {
    const before = (await ops('?per_page=100')).length;
    expect(before).toBeGreaterThan(5);
    t.clock.advance(179 * 86_400_000);
    const fresh = through(t, { owner: g.owner, base: g.base, token: await baseToken(t, g.owner, g.base) });
    const [recent] = await appendRows(fresh, 'Table1', [{ Name: 'Recent' }]);
    await fresh.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: recent, row: { Name: 'Recent 2' } }] });
    t.clock.advance(2 * 86_400_000);
    expect(await t.container.history.service.prune()).toBe(before);
    const left = (await fresh.call('GET', 'operations/?per_page=100')).json().operations as Op[];
    expect(left.map((o) => o.op_type)).toEqual(['modify_row', 'insert_row']);
    // Only the update is in the row index (a new row's append has no entry: row-operations.ts).
    const rest = await t.container.db.selectFrom('operation_log_rows').select('op_id').execute();
    expect(rest.map((r) => Number(r.op_id))).toEqual([left[0]!.op_id]);
  });
});

describe.each(DIALECTS)('history: log off (%s)', (dialect) => {
  it('keeps nothing when OPERATION_LOG_RETENTION_DAYS is 0', async () => {
    const t = await createTestApp(dialect, { OPERATION_LOG_RETENTION_DAYS: '0' });
    try {
      const g = await gateway(t);
      await appendRows(g, 'Table1', [{ Name: 'x' }]);
      expect((await g.call('GET', 'operations/')).json()).toEqual({ operations: [] });
    } finally {
      await t.close();
    }
  });
});
