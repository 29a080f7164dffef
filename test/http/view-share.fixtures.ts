import { expect } from 'vitest';
import { basePath, createBase, createUser, type TestApp } from '../helpers/index.js';
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
