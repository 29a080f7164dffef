import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { baseWithRoles, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, through, type Gateway } from './rows.fixtures.js';

type Meta = { tables: Array<{ _id: string; name: string; columns: Array<{ key: string; name: string; type: string }> }> };

describe.each(DIALECTS)('restore of structure operations (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const { owner, base, roles: r } = await baseWithRoles(t);
    roles = r;
    g = through(t, { owner, base, token: roles.tokens.owner });
  });
  afterAll(() => t.close());

  const metadata = async () => (await g.call('GET', 'metadata/')).json().metadata as Meta;
  const table = async (name: string) => (await metadata()).tables.find((x) => x.name === name);
  const lastOp = async () => (await g.call('GET', 'operations/?per_page=1')).json().operations[0] as { op_id: number; op_type: string; reverts: number | null };
  const restore = (opId: number, token = roles.tokens.owner) => g.call('PUT', `restore-operations/${opId}/`, {}, token);

  it('reverts a column add, a rename and a delete (the column comes back empty), owner and admin only', async () => {
    await addTable(g, 'Cols', [{ column_name: 'Name', column_type: 'text' }]);
    await appendRows(g, 'Cols', [{ Name: 'a' }]);
    expect((await g.call('POST', 'columns/', { table_name: 'Cols', column_name: 'Extra', column_type: 'number' })).statusCode).toBe(200);
    const added = await lastOp();
    expect(added.op_type).toBe('insert_column');
    for (const role of ['rw', 'api-rw', 'r'] as const) expect((await restore(added.op_id, roles.tokens[role])).statusCode).toBe(403);
    expect((await restore(added.op_id, roles.tokens.admin)).statusCode).toBe(200);
    expect((await table('Cols'))!.columns.map((c) => c.name)).toEqual(['Name']);
    expect((await lastOp()).reverts).toBe(added.op_id);
    // Restoring the revert is a redo.
    expect((await restore((await lastOp()).op_id)).statusCode).toBe(200);
    expect((await table('Cols'))!.columns.map((c) => c.name)).toEqual(['Name', 'Extra']);

    await g.call('PUT', 'columns/', { table_name: 'Cols', column: 'Extra', op_type: 'rename_column', new_column_name: 'Count' });
    const renamed = await lastOp();
    expect(renamed.op_type).toBe('rename_column');
    expect((await restore(renamed.op_id)).statusCode).toBe(200);
    expect((await table('Cols'))!.columns.map((c) => c.name)).toEqual(['Name', 'Extra']);

    await g.call('DELETE', 'columns/', { table_name: 'Cols', column: 'Extra' });
    const deleted = await lastOp();
    expect(deleted.op_type).toBe('delete_column');
    expect((await restore(deleted.op_id)).statusCode).toBe(200);
    const cols = (await table('Cols'))!.columns;
    expect(cols.map((c) => [c.name, c.type])).toEqual([['Name', 'text'], ['Extra', 'number']]);
    // The restored column works: cells can be written to it.
    const rows = (await g.call('GET', 'rows/?table_name=Cols')).json().rows;
    const put = await g.call('PUT', 'rows/', { table_name: 'Cols', updates: [{ row_id: rows[0]._id, row: { Extra: 7 } }] });
    expect(put.statusCode, put.body).toBe(200);
  });

  it('reverts a table add and rename; refuses when the column or name is gone or taken (409), and unrevertible changes (400)', async () => {
    await addTable(g, 'Tmp', [{ column_name: 'Name', column_type: 'text' }]);
    const created = await lastOp();
    expect(created.op_type).toBe('insert_table');
    await g.call('PUT', 'tables/', { table_name: 'Tmp', new_table_name: 'Tmp2' });
    const renamed = await lastOp();
    expect(renamed.op_type).toBe('rename_table');
    // Another table took the old name: the rename cannot be set back.
    await addTable(g, 'Tmp', [{ column_name: 'Name', column_type: 'text' }]);
    const taken = await restore(renamed.op_id);
    expect(taken.statusCode, taken.body).toBe(409);
    expect((await table('Tmp2'))).toBeDefined();
    await g.call('DELETE', 'tables/', { table_name: 'Tmp' });
    expect((await restore(renamed.op_id)).statusCode).toBe(200);
    expect(await table('Tmp2')).toBeUndefined();
    expect(await table('Tmp')).toBeDefined();
    // Reverting the add deletes the table (into the trash).
    expect((await restore(created.op_id)).statusCode).toBe(200);
    expect(await table('Tmp')).toBeUndefined();
    expect((await g.call('GET', 'trash/tables/')).json().tables.map((x: { table_name: string }) => x.table_name)).toContain('Tmp');

    // A column added then deleted: reverting the add finds no column → 409, nothing changes.
    await g.call('POST', 'columns/', { table_name: 'Cols', column_name: 'Short', column_type: 'text' });
    const add = await lastOp();
    await g.call('DELETE', 'columns/', { table_name: 'Cols', column: 'Short' });
    const gone = await restore(add.op_id);
    expect(gone.statusCode, gone.body).toBe(409);

    // A view change is not restorable: 400, and the view stays.
    const view = await g.call('POST', 'views/?table_name=Cols', { name: 'V2' });
    expect(view.statusCode, view.body).toBe(200);
    const op = await lastOp();
    expect(op.op_type).toBe('insert_view');
    const res = await restore(op.op_id);
    expect(res.statusCode, res.body).toBe(400);
    expect((await g.call('GET', 'views/?table_name=Cols')).json().views.map((v: { name: string }) => v.name)).toContain('V2');
    expect((await restore(999_999)).statusCode).toBe(404);
  });
});
