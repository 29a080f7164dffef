import { expect } from 'vitest';
import { basePath, createBase, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { addTable, through, type Gateway } from './rows.fixtures.js';

/** The view-share tests' table: People (Name, Team, Salary), whose "Red" views show the red team without Salary. */
export const PEOPLE_COLUMNS = [
  { column_name: 'Name', column_type: 'text' },
  { column_name: 'Team', column_type: 'text' },
  { column_name: 'Salary', column_type: 'number' },
];

/** A view of People filtered to Team = red with Salary hidden; returns its id. */
export async function addRedTeamView(g: Gateway, name = 'Red team'): Promise<string> {
  const view = await g.call('POST', 'views/?table_name=People', {
    name,
    type: 'table',
    filters: [{ column_name: 'Team', filter_predicate: 'is', filter_term: 'red' }],
    hidden_columns: ['Salary'],
  });
  expect(view.statusCode, view.body).toBe(200);
  return view.json()._id as string;
}

/** A new owner and base with People and a second table, Secret (Code), through the owner's Base-Token. */
export async function peopleBase(t: TestApp) {
  const owner = await createUser(t);
  const base = await createBase(t, owner);
  const token = (await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: owner.token })).json().access_token as string;
  const g = through(t, { owner, base, token });
  const people = await addTable(g, 'People', PEOPLE_COLUMNS);
  await addTable(g, 'Secret', [{ column_name: 'Code', column_type: 'text' }]);
  return { owner, base, g, people };
}

/** A new user with a view of `base`'s table shared with them at `permission`, and the share's Base-Token. */
export async function viewShareToken(
  t: TestApp,
  share: { owner: TestUser; base: TestBase; tableId: string; viewId: string; permission: 'r' | 'rw' },
): Promise<{ user: TestUser; token: string }> {
  const user = await createUser(t);
  const { owner, base, tableId, viewId, permission } = share;
  const made = await t.request({ method: 'POST', url: basePath(base, 'user-view-shares/'), token: owner.token, payload: { table_id: tableId, view_id: viewId, permission, to_user: user.email } });
  expect(made.statusCode, made.body).toBe(200);
  const res = await t.request({ method: 'GET', url: basePath(base, `user-view-share-access-token/?user_view_share_id=${made.json().id}`), token: user.token });
  expect(res.statusCode, res.body).toBe(200);
  return { user, token: res.json().access_token as string };
}

/** The columns' keys of a table as `addTable` answers it, by column name. */
export function columnKeys(table: { columns: unknown }): Record<string, string> {
  return Object.fromEntries((table.columns as Array<{ name: string; key: string }>).map((c) => [c.name, c.key]));
}

/** `peopleBase` on a listening app: its live channel's URL, People's id and its columns' keys. */
export async function livePeopleBase(t: TestApp, listen: (t: TestApp) => Promise<string>) {
  const url = await listen(t);
  const { owner, base, g, people } = await peopleBase(t);
  return { url, owner, base, g, tableId: people._id as string, keys: columnKeys(people) };
}
