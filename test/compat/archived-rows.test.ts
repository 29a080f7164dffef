import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createBase, createTestApp, createUser, type TestApp } from '../helpers/index.js';
import { READ_ONLY_ROLES, WRITE_ROLES, roleSet, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, listRows, storedRowCount, through, type Gateway } from '../http/rows.fixtures.js';

describe.each(DIALECTS)('add-archived-rows / insert-archived-rows (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;

  const titles = (rows: Array<Record<string, unknown>>) => rows.map((r) => r.Title).sort();
  const sqlTitles = async () => {
    const res = await g.call('POST', 'sql/', { sql: 'SELECT Title FROM Tasks LIMIT 1000', convert_keys: true });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().results as Array<{ Title: string }>).map((r) => r.Title).sort();
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const owner = await createUser(t);
    const base = await createBase(t, owner);
    roles = await roleSet(t, owner, base);
    g = through(t, { owner, base, token: roles.tokens.owner });
    await addTable(g, 'Tasks', [{ column_name: 'Title', column_type: 'text' }, { column_name: 'Done', column_type: 'checkbox' }]);
    await appendRows(g, 'Tasks', [{ Title: 'live' }]);
  });
  afterAll(() => t.close());

  it('stores archived rows: left out of rows/, filtered-rows/, views and the whole-base read, found by SQL', async () => {
    const add = await g.call('POST', 'add-archived-rows/', { table_name: 'Tasks', rows: [{ Title: 'old', Done: true }, { Title: 'older' }] });
    expect(add.statusCode, add.body).toBe(200);
    expect(add.json()).toEqual({ inserted_row_count: 2 });
    const insert = await g.call('POST', 'insert-archived-rows/', { table_name: 'Tasks', rows: [{ Title: 'oldest' }] });
    expect(insert.statusCode, insert.body).toBe(200);
    expect(insert.json()).toEqual({ inserted_row_count: 1 });

    expect(titles(await listRows(g, 'table_name=Tasks&convert_keys=true'))).toEqual(['live']);
    expect(titles(await listRows(g, 'table_name=Tasks&convert_keys=true&view_name=Default%20View'))).toEqual(['live']);
    const filtered = await g.call('POST', 'filtered-rows/?table_name=Tasks', { filters: [{ column_name: 'Title', filter_predicate: 'contains', filter_term: 'old' }] });
    expect(filtered.statusCode, filtered.body).toBe(200);
    expect(filtered.json().rows).toEqual([]);
    const whole = await g.call('GET', '');
    expect(whole.statusCode).toBe(200);
    const tasks = whole.json().tables.find((x: { name: string }) => x.name === 'Tasks');
    expect(tasks.rows).toHaveLength(1);

    expect(await sqlTitles()).toEqual(['live', 'old', 'older', 'oldest']);
    const stored = await t.container.db.selectFrom('base_rows').select('data').where('base_id', '=', g.base.id).execute();
    const archived = stored.map((r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data)).filter((d) => d._archived === true);
    expect(archived).toHaveLength(3);
    const live = await listRows(g, 'table_name=Tasks');
    expect(live[0]).toMatchObject({ _archived: false });
  });

  it.each(WRITE_ROLES)('%s may add archived rows', async (role) => {
    const before = await storedRowCount(g);
    const res = await g.call('POST', 'add-archived-rows/', { table_name: 'Tasks', rows: [{ Title: `by-${role}` }] }, roles.tokens[role]);
    expect(res.statusCode, res.body).toBe(200);
    expect(await storedRowCount(g)).toBe(before + 1);
    expect(titles(await listRows(g, 'table_name=Tasks&convert_keys=true'))).toEqual(['live']);
  });

  it.each(READ_ONLY_ROLES)('%s (read-only) is refused with 403 and nothing is stored', async (role) => {
    const before = await storedRowCount(g);
    for (const path of ['add-archived-rows/', 'insert-archived-rows/']) {
      const res = await g.call('POST', path, { table_name: 'Tasks', rows: [{ Title: 'no' }] }, roles.tokens[role]);
      expect(res.statusCode).toBe(403);
    }
    expect(await storedRowCount(g)).toBe(before);
  });

  it('refuses bad inputs with a 4xx naming the problem, and stores nothing', async () => {
    const before = await storedRowCount(g);
    const cases: [unknown, number, string][] = [
      [{ table_name: 'Tasks' }, 400, 'rows invalid.'],
      [{ table_name: 'Tasks', rows: [] }, 400, 'rows invalid: the list is empty.'],
      [{ table_name: 'Tasks', rows: [{ Title: 'a' }, 'b'] }, 400, 'rows invalid.'],
      [{ table_name: 'Tasks', rows: Array.from({ length: 1001 }, () => ({ Title: 'x' })) }, 400, 'Number of rows to append exceeds 1000.'],
      [{ table_name: 'Nope', rows: [{ Title: 'a' }] }, 404, 'table Nope not found'],
      [{ table_name: 'Tasks', rows: [{ Title: 'fine' }, { Done: 'maybe' }] }, 400, 'Row 2: value of column Done (checkbox) is invalid'],
    ];
    for (const [body, status, message] of cases) {
      for (const path of ['add-archived-rows/', 'insert-archived-rows/']) {
        const res = await g.call('POST', path, body);
        expect(res.statusCode, `${path} ${JSON.stringify(body).slice(0, 80)}`).toBe(status);
        expect(res.json().error_msg).toContain(message);
      }
    }
    expect(await storedRowCount(g)).toBe(before);
  });
});
