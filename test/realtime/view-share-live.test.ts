import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { appendRows, through, type Gateway } from '../http/rows.fixtures.js';
import { joined, listen, settle, waitFor, type LiveClient } from './live.support.js';
import { addRedTeamView, livePeopleBase, viewShareToken } from '../http/view-share.fixtures.js';

type Op = { op_type: string; table_id?: string; row_id?: string; link_id?: string; table1_row_id?: string; table2_row_id?: string; row_data?: Record<string, unknown>; updated?: Record<string, unknown>; old_row?: Record<string, unknown>; deleted_row?: Record<string, unknown> };

/**
 * Issue 30: the live channel of a view share's holder carries only the view's changes — rows of its
 * table the view shows before or after the change, the visible columns' cells only — and tells it to
 * re-read when its table's structure changes. Its own operations go through the rows API.
 */
describe.each(DIALECTS)('live channel limited to a shared view (%s)', (dialect) => {
  let t: TestApp;
  let url: string;
  let owner: TestUser;
  let base: TestBase;
  let g: Gateway;
  let tableId: string;
  let keys: Record<string, string>;
  const clients: LiveClient[] = [];

  /** A user with the view shared with them (`r`), joined to the live channel with its Base-Token. */
  async function viewer(viewId: string): Promise<{ live: LiveClient; token: string }> {
    const { token } = await viewShareToken(t, { owner, base, tableId, viewId, permission: 'rw' });
    const live = await joined(url, base.uuid, token);
    clients.push(live);
    return { live, token };
  }
  const ops = (c: LiveClient) => c.messages('update-dtable') as Op[];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    ({ url, owner, base, g, tableId, keys } = await livePeopleBase(t, listen));
    t.container.dispatcher.start();
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  it("sends the view's rows (before or after a change) with the visible cells only", async () => {
    const { live } = await viewer(await addRedTeamView(g, 'Red'));
    const all = await joined(url, base.uuid, g.token);
    clients.push(all);

    const [ann, ben] = await appendRows(g, 'People', [
      { Name: 'Ann', Team: 'red', Salary: 1 },
      { Name: 'Ben', Team: 'blue', Salary: 2 },
    ]);
    const update = (rowId: string, row: object) => g.call('PUT', 'rows/', { table_name: 'People', updates: [{ row_id: rowId, row }] });
    expect((await update(ann!, { Salary: 5 })).statusCode).toBe(200); // a hidden cell only: nothing for the view
    expect((await update(ben!, { Name: 'Bob' })).statusCode).toBe(200); // a row outside the view: nothing
    expect((await update(ann!, { Name: 'Anna' })).statusCode).toBe(200); // in the view
    expect((await update(ben!, { Team: 'red', Salary: 3 })).statusCode).toBe(200); // comes into the view
    expect((await update(ann!, { Team: 'blue' })).statusCode).toBe(200); // goes out of it
    await appendRows(g, 'Secret', [{ Code: 'x' }]); // another table: nothing
    expect((await g.call('DELETE', 'rows/', { table_name: 'People', row_ids: [ann] })).statusCode).toBe(200); // not shown before: nothing
    expect((await g.call('DELETE', 'rows/', { table_name: 'People', row_ids: [ben] })).statusCode).toBe(200); // shown: deleted

    // The whole base's client got all 9 operations; once it has, the view's are all sent too.
    await waitFor(() => ops(all).length >= 9, "the base's operations");
    await settle();
    const got = ops(live);
    expect(got.map((op) => [op.op_type, op.row_id])).toEqual([
      ['insert_row', ''],
      ['modify_row', ann],
      ['modify_row', ben],
      ['modify_row', ann],
      ['delete_row', ben],
    ]);
    expect(got[0]!.row_data).toMatchObject({ _id: ann, [keys.Name!]: 'Ann', [keys.Team!]: 'red' });
    expect(got[1]!.updated).toEqual({ [keys.Name!]: 'Anna' });
    expect(got[2]!.updated).toEqual({ [keys.Team!]: 'red' });
    expect(got[3]!.updated).toEqual({ [keys.Team!]: 'blue' });
    expect(got[4]!.deleted_row).toMatchObject({ _id: ben, [keys.Name!]: 'Bob' });
    // No cell of the hidden column, and nothing of the other table, anywhere.
    expect(JSON.stringify(got)).not.toContain(`"${keys.Salary}"`);
    expect(got.every((op) => op.table_id === tableId)).toBe(true);
    expect(ops(all).some((op) => JSON.stringify(op).includes(`"${keys.Salary}"`))).toBe(true);
  });

  it("tells the holder to re-read when its table's structure changes, and refuses its own operations", async () => {
    const { live } = await viewer('0000');
    const added = await g.call('POST', 'columns/', { table_name: 'People', column_name: 'Note', column_type: 'text' });
    expect(added.statusCode, added.body).toBe(200);
    await waitFor(() => live.messages('dtable-changed').length > 0, 'the re-read hint');
    expect(JSON.parse(live.messages('dtable-changed')[0] as string)).toMatchObject({ table_id: tableId, reason: 'structure', op_type: 'insert_column' });
    expect(ops(live)).toEqual([]);
    const answer = await live.socket.timeout(8000).emitWithAck('update-dtable', base.uuid, { op_type: 'modify_row', table_id: tableId, row_id: 'x', updated: {} });
    expect(answer).toEqual({ status: false, message: 'The token is limited to one view: its changes go through the rows API.' });
  });

  it("sends link changes of the rows the view shows, through the link columns it shows, and the cells that follow", async () => {
    const column = async (name: string, type: string, data: object) => {
      const res = await g.call('POST', 'columns/', { table_name: 'People', column_name: name, column_type: type, column_data: data });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { key: string; data: { link_id?: string } };
    };
    const codes = await column('Codes', 'link', { table: 'People', other_table: 'Secret' });
    const hiddenCodes = await column('Hidden codes', 'link', { table: 'People', other_table: 'Secret' });
    const count = await column('Code count', 'link-formula', { formula: 'count_links', link_column_key: codes.key });
    const view = await g.call('POST', 'views/?table_name=People', {
      name: 'Red links',
      type: 'table',
      filters: [{ column_name: 'Team', filter_predicate: 'is', filter_term: 'red' }],
      hidden_columns: ['Salary', 'Hidden codes'],
    });
    expect(view.statusCode, view.body).toBe(200);
    const { live } = await viewer(view.json()._id as string);
    const [ann, ben] = await appendRows(g, 'People', [
      { Name: 'Linked Ann', Team: 'red' },
      { Name: 'Linked Ben', Team: 'blue' },
    ]);
    const [x, y] = await appendRows(g, 'Secret', [{ Code: 'x' }, { Code: 'y' }]);
    const link = async (method: 'POST' | 'DELETE', linkId: string, table: string, other: string, map: Record<string, string[]>) => {
      const res = await g.call(method, 'links/', { link_id: linkId, table_name: table, other_table_name: other, other_rows_ids_map: map });
      expect(res.statusCode, res.body).toBe(200);
    };
    const codesLink = codes.data.link_id!;
    // Ann's insert reaches the holder first (Ben is not in the view; Secret's rows are another table).
    await waitFor(() => ops(live).some((op) => op.op_type === 'insert_row' && op.row_data?._id === ann), "Ann's insert");
    const start = ops(live).length;

    await link('POST', codesLink, 'People', 'Secret', { [ann!]: [x!] }); // in the view: sent, with the count that follows
    await link('POST', codesLink, 'People', 'Secret', { [ben!]: [x!] }); // a row outside the view: nothing
    await link('POST', hiddenCodes.data.link_id!, 'People', 'Secret', { [ann!]: [y!] }); // a hidden link column: nothing
    await link('POST', codesLink, 'Secret', 'People', { [y!]: [ann!] }); // from the other table's side: the view's side is sent
    await link('DELETE', codesLink, 'People', 'Secret', { [ann!]: [x!] }); // removed
    // A last change of the view's row: once it has come, all before it has.
    expect((await g.call('PUT', 'rows/', { table_name: 'People', updates: [{ row_id: ann, row: { Name: 'Ann done' } }] })).statusCode).toBe(200);
    await waitFor(() => ops(live).some((op) => op.op_type === 'modify_row' && op.row_id === ann && JSON.stringify(op.updated).includes('Ann done')), 'the last change');

    const got = ops(live).slice(start);
    const summary = got.map((op) =>
      op.op_type === 'modify_row' ? ['modify_row', op.row_id, op.updated] : [op.op_type, op.link_id, op.table1_row_id, op.table2_row_id],
    );
    expect(summary).toEqual([
      ['add_link', codesLink, ann, x],
      ['modify_row', ann, { [count.key]: 1 }],
      ['add_link', codesLink, ann, y],
      ['modify_row', ann, { [count.key]: 2 }],
      ['remove_link', codesLink, ann, x],
      ['modify_row', ann, { [count.key]: 1 }],
      ['modify_row', ann, { [keys.Name!]: 'Ann done' }],
    ]);
    expect(got.every((op) => op.table_id === undefined || op.table_id === tableId)).toBe(true);
    expect(JSON.stringify(got)).not.toContain(hiddenCodes.data.link_id!);
    expect(JSON.stringify(got)).not.toContain(`"${ben}"`);
  });
});
