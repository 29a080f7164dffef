import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { appendRows, type Gateway } from '../http/rows.fixtures.js';
import { joined, listen, waitFor, type LiveClient } from './live.support.js';
import { addRedTeamView, livePeopleBase, viewShareToken } from '../http/view-share.fixtures.js';

type Op = { op_type: string; row_id?: string; row_data?: Record<string, unknown>; updated?: Record<string, unknown> };

/**
 * Issue 30: a view share's live channel judges each change with the view as it was when the change was
 * made, not as it is when the change is sent. The dispatcher is not started here: the changes and the
 * view's edits all commit first, then one run sends them.
 */
describe.each(DIALECTS)('live channel of a shared view, judged as of the change (%s)', (dialect) => {
  let t: TestApp;
  let url: string;
  let owner: TestUser;
  let base: TestBase;
  let g: Gateway;
  let tableId: string;
  let keys: Record<string, string>;
  const clients: LiveClient[] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    ({ url, owner, base, g, tableId, keys } = await livePeopleBase(t, listen));
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  it("uses the view's filters and hidden columns of the moment of each change", async () => {
    const viewId = await addRedTeamView(g, 'Red'); // Team = red, Salary hidden
    const { token } = await viewShareToken(t, { owner, base, tableId, viewId, permission: 'r' });
    const live = await joined(url, base.uuid, token);
    clients.push(live);
    const update = async (rowId: string, row: object) => expect((await g.call('PUT', 'rows/', { table_name: 'People', updates: [{ row_id: rowId, row }] })).statusCode).toBe(200);
    const editView = async (body: object) => {
      const res = await g.call('PUT', 'views/Red/?table_name=People', body);
      expect(res.statusCode, res.body).toBe(200);
    };

    const [ann, ben] = await appendRows(g, 'People', [
      { Name: 'Ann', Team: 'red', Salary: 1 },
      { Name: 'Ben', Team: 'blue', Salary: 2 },
    ]); // the view shows red: Ann, without her salary
    await editView({ filters: [{ column_name: 'Team', filter_predicate: 'is', filter_term: 'blue' }] });
    await update(ann!, { Name: 'Anna' }); // red: no longer in the view
    await update(ben!, { Salary: 5 }); // blue, but Salary is still hidden: nothing
    await editView({ hidden_columns: [] });
    await update(ben!, { Salary: 6 }); // now shown
    await update(ben!, { Name: 'Benny' });
    expect(live.messages('update-dtable')).toEqual([]); // nothing sent yet: the dispatcher has not run

    for (let run = 0; run < 3; run++) await t.container.dispatcher.runOnce();
    const ops = () => live.messages('update-dtable') as Op[];
    await waitFor(() => ops().some((op) => op.updated?.[keys.Name!] === 'Benny'), 'the last change');
    expect(ops().map((op) => [op.op_type, op.row_id ?? '', op.updated ?? null])).toEqual([
      ['insert_row', '', null],
      ['modify_row', ben, { [keys.Salary!]: 6 }],
      ['modify_row', ben, { [keys.Name!]: 'Benny' }],
    ]);
    expect(ops()[0]!.row_data).toMatchObject({ _id: ann, [keys.Name!]: 'Ann', [keys.Team!]: 'red' });
    expect(ops()[0]!.row_data).not.toHaveProperty(keys.Salary!);
    // The view's two edits came as re-read hints, in their place.
    await waitFor(() => live.messages('dtable-changed').length >= 2, 'the hints');
    expect(live.messages('dtable-changed').map((m) => JSON.parse(m as string).op_type)).toEqual(['modify_filters', 'modify_hidden_columns']);
  });
});
