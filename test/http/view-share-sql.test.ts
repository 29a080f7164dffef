import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { appendRows, through, type Gateway } from './rows.fixtures.js';
import { addRedTeamView, peopleBase, viewShareToken } from './view-share.fixtures.js';

/**
 * Issue 30: SQL through a view share sees exactly the view — its table, its rows (filters; archived rows
 * left out), its visible columns — and writes within it as the rows API does.
 */
describe.each(DIALECTS)('SQL limited to a shared view (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let g: Gateway;
  let tableId: string;
  let viewId: string;
  let ids: Record<string, string>;

  /** A view share's Base-Token for a new user. */
  const viewToken = async (permission: 'r' | 'rw') => (await viewShareToken(t, { owner, base, tableId, viewId, permission })).token;
  const query = (token: string, sql: string, extra: object = {}) => g.call('POST', 'sql/', { sql, convert_keys: true, ...extra }, token);
  /** Every row of People as the owner sees it: name → team. */
  const everyRow = async () => {
    const res = await query(g.token, 'select Name, Team, Salary from People order by Name');
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results.map((r: Record<string, unknown>) => `${r.Name}:${r.Team}:${r.Salary}`);
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    let people: { _id: string };
    ({ owner, base, g, people } = await peopleBase(t));
    tableId = people._id;
    await appendRows(g, 'Secret', [{ Code: 'x' }]);
    viewId = await addRedTeamView(g);
  });
  afterAll(() => t.close());

  // Each test starts from the same rows: Ann and Cid (red) in the view, Ben (blue) not, Dan (red, archived) not.
  async function resetRows(): Promise<void> {
    const all = await query(g.token, 'select _id from People');
    const rowIds = all.json().results.map((r: { _id: string }) => r._id);
    if (rowIds.length > 0) expect((await g.call('DELETE', 'rows/', { table_name: 'People', row_ids: rowIds })).statusCode).toBe(200);
    const [ann, ben, cid] = await appendRows(g, 'People', [
      { Name: 'Ann', Team: 'red', Salary: 1 },
      { Name: 'Ben', Team: 'blue', Salary: 2 },
      { Name: 'Cid', Team: 'red', Salary: 3 },
    ]);
    const archived = await g.call('POST', 'add-archived-rows/', { table_name: 'People', rows: [{ Name: 'Dan', Team: 'red', Salary: 4 }] });
    expect(archived.statusCode, archived.body).toBe(200);
    ids = { ann: ann!, ben: ben!, cid: cid! };
  }

  it("reads only the view's rows and visible columns, whatever the statement asks", async () => {
    await resetRows();
    const token = await viewToken('r');
    const star = await query(token, 'select * from People order by Name');
    expect(star.statusCode, star.body).toBe(200);
    expect(star.json().results.map((r: Record<string, unknown>) => r.Name)).toEqual(['Ann', 'Cid']);
    expect(star.json().metadata.map((c: { name: string }) => c.name)).not.toContain('Salary');
    for (const row of star.json().results) expect(Object.keys(row)).not.toContain('Salary');
    const keyed = await query(token, 'select * from People', { convert_keys: false });
    const salaryKey = (await query(g.token, 'select * from People limit 1')).json().metadata.find((c: { name: string }) => c.name === 'Salary').key as string;
    for (const row of keyed.json().results) expect(Object.keys(row)).not.toContain(salaryKey);

    const blue = await query(token, "select Name from People where Team = 'blue' or Name = 'Dan'");
    expect(blue.json().results).toEqual([]);
    expect((await query(token, 'select count(*) from People')).json().results).toEqual([{ 'COUNT(*)': 2 }]);
    const grouped = await query(token, 'select Team, count(*) from People group by Team');
    expect(grouped.json().results).toEqual([{ Team: 'red', 'COUNT(*)': 2 }]);
    const byId = await query(token, 'select Name from People where _id = ?', { parameters: [ids.ben] });
    expect(byId.json().results).toEqual([]);
    // Formula-engine conditions run over the same rows.
    const formula = await query(token, "select Name from People where left(Name, 1) != 'x'");
    expect(formula.statusCode, formula.body).toBe(200);
    expect(formula.json().results.map((r: { Name: string }) => r.Name).sort()).toEqual(['Ann', 'Cid']);
  });

  it('refuses a statement naming a hidden column or another table, naming it (403)', async () => {
    const token = await viewToken('r');
    for (const sql of ['select Salary from People', 'select Name from People where Salary > 1', 'select Name from People order by salary', 'select sum(Salary) from People', 'select Team from People group by Team having max(Salary) > 0']) {
      const res = await query(token, sql);
      expect(res.statusCode, sql).toBe(403);
      expect(res.json().error_msg, sql).toBe('The token is limited to one view: the column Salary is hidden in it.');
    }
    for (const sql of ['select * from Secret', 'select People.Name from People, Secret where People.Name = Secret.Code', 'select * from Table1']) {
      const res = await query(token, sql);
      expect(res.statusCode, sql).toBe(403);
      expect(res.json().error_msg, sql).toMatch(/^The token is limited to one view: the table (Secret|Table1) is not its table\.$/);
    }
    const unknown = await query(token, 'select * from Nowhere');
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error_message).toBe("Table 'Nowhere' not found.");
  });

  it("writes with an rw share within the view's rows and visible columns, as the rows API", async () => {
    await resetRows();
    const token = await viewToken('rw');
    // UPDATE and DELETE match the view's rows only: Ben (outside) and Dan (archived) stay as they are.
    const update = await query(token, "update People set Name = 'X' where Name in ('Ben', 'Dan', 'Ann')");
    expect(update.statusCode, update.body).toBe(200);
    expect(update.json().affected_rows).toBe(1);
    expect(await everyRow()).toEqual(['Ben:blue:2', 'Cid:red:3', 'Dan:red:4', 'X:red:1']);
    const removed = await query(token, 'delete from People');
    expect(removed.json().affected_rows).toBe(2);
    expect(await everyRow()).toEqual(['Ben:blue:2', 'Dan:red:4']);
    // A new row need not match the view's filters (as the rows API's appends).
    const insert = await query(token, "insert into People (Name, Team) values ('Eve', 'blue')");
    expect(insert.statusCode, insert.body).toBe(200);
    expect(await everyRow()).toEqual(['Ben:blue:2', 'Dan:red:4', 'Eve:blue:null']);

    for (const sql of ["insert into People (Name, Salary) values ('Fay', 9)", 'update People set Salary = 5', "update People set Name = 'Y' where Salary = 2", "delete from People where Salary > 0"]) {
      const res = await query(token, sql);
      expect(res.statusCode, sql).toBe(403);
      expect(res.json().error_msg, sql).toBe('The token is limited to one view: the column Salary is hidden in it.');
    }
    for (const sql of ["insert into Secret (Code) values ('y')", "update Secret set Code = 'y'", 'delete from Secret']) {
      const res = await query(token, sql);
      expect(res.statusCode, sql).toBe(403);
      expect(res.json().error_msg, sql).toBe('The token is limited to one view: the table Secret is not its table.');
    }
    expect(await everyRow()).toEqual(['Ben:blue:2', 'Dan:red:4', 'Eve:blue:null']);
    expect((await query(g.token, 'select Code from Secret')).json().results.map((r: { Code: string }) => r.Code)).toEqual(['x']);
  });

  it('refuses writes to a read-only share and changes nothing', async () => {
    await resetRows();
    const token = await viewToken('r');
    for (const sql of ["update People set Name = 'X'", 'delete from People', "insert into People (Name) values ('Z')"]) {
      const res = await query(token, sql);
      expect(res.statusCode, sql).toBe(403);
    }
    expect(await everyRow()).toEqual(['Ann:red:1', 'Ben:blue:2', 'Cid:red:3', 'Dan:red:4']);
  });

  it("follows the view as it is now: a changed filter or a newly hidden column applies to the next statement", async () => {
    await resetRows();
    const token = await viewToken('r');
    const changed = await g.call('PUT', `views/${encodeURIComponent('Red team')}/?table_name=People`, {
      filters: [{ column_name: 'Team', filter_predicate: 'is', filter_term: 'blue' }],
      hidden_columns: ['Salary', 'Team'],
    });
    expect(changed.statusCode, changed.body).toBe(200);
    try {
      expect((await query(token, 'select * from People')).json().results.map((r: Record<string, unknown>) => [r.Name, r.Team])).toEqual([['Ben', undefined]]);
      expect((await query(token, 'select Team from People')).statusCode).toBe(403);
    } finally {
      await g.call('PUT', `views/${encodeURIComponent('Red team')}/?table_name=People`, {
        filters: [{ column_name: 'Team', filter_predicate: 'is', filter_term: 'red' }],
        hidden_columns: ['Salary'],
      });
    }
  });
});
