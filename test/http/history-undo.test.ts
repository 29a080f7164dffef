import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appendRows, appWithTable, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS)('undo and redo through restore-operations (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect));
  });
  afterAll(() => t.close());

  const latest = async () => (await g.call('GET', 'operations/?per_page=1')).json().operations[0] as { op_id: number; reverts: number | null };
  const restore = (opId: number) => g.call('PUT', `restore-operations/${opId}/`, {});
  const nameOf = async (rowId: string) => (await g.call('GET', `rows/${rowId}/?table_name=T&convert_keys=true`)).json().Name;
  const edit = async (rowId: string, name: string) => {
    expect((await g.call('PUT', 'rows/', { table_name: 'T', updates: [{ row_id: rowId, row: { Name: name } }] })).statusCode).toBe(200);
    return (await latest()).op_id;
  };

  it('undoes edits of one cell step by step (an undone edit and its undo cancel out), redoes them, and still refuses a real conflict', async () => {
    const [row] = await appendRows(g, 'T', [{ Name: 'a' }]);
    const first = await edit(row!, 'b');
    const second = await edit(row!, 'c');
    expect((await restore(second)).statusCode).toBe(200);
    const undoSecond = (await latest()).op_id;
    expect(await nameOf(row!)).toBe('b');
    const undoFirst = await restore(first);
    expect(undoFirst.statusCode, undoFirst.body).toBe(200);
    const undoFirstId = (await latest()).op_id;
    expect(await nameOf(row!)).toBe('a');
    // Redo, in the opposite order.
    expect((await restore(undoFirstId)).statusCode).toBe(200);
    expect(await nameOf(row!)).toBe('b');
    const redoSecond = await restore(undoSecond);
    expect(redoSecond.statusCode, redoSecond.body).toBe(200);
    expect(await nameOf(row!)).toBe('c');
    // The second edit is in effect again: undoing the first now conflicts with it.
    const conflict = await restore(first);
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().conflicts[0]).toMatchObject({ row_id: row });
    expect(await nameOf(row!)).toBe('c');
  });
});
