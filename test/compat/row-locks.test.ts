import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createBase, createTestApp, createUser, type TestApp } from '../helpers/index.js';
import { READ_ONLY_ROLES, WRITE_ROLES, roleSet, type GatewayRole, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, storedRowCount, through, type Gateway } from '../http/rows.fixtures.js';

describe.each(DIALECTS)('lock-rows / unlock-rows (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;

  const row = async (id: string) => {
    const res = await g.call('GET', `rows/${id}/?table_name=Tasks&convert_keys=true`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const lock = (ids: string[], token?: string, path = 'lock-rows/') => g.call('PUT', path, { table_name: 'Tasks', row_ids: ids }, token);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const owner = await createUser(t);
    const base = await createBase(t, owner);
    roles = await roleSet(t, owner, base);
    g = through(t, { owner, base, token: roles.tokens.owner });
    await addTable(g, 'Tasks', [{ column_name: 'Title', column_type: 'text' }]);
  });
  afterAll(() => t.close());

  it('sets _locked and _locked_by, and unlocks', async () => {
    const [a, b] = await appendRows(g, 'Tasks', [{ Title: 'a' }, { Title: 'b' }]);
    expect(await row(a!)).toMatchObject({ _locked: null, _locked_by: null });
    const res = await lock([a!, b!]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect(await row(a!)).toMatchObject({ Title: 'a', _locked: true, _locked_by: roles.users.owner.virtualId });
    const listed = (await g.call('GET', 'rows/?table_name=Tasks')).json().rows.find((r: { _id: string }) => r._id === b);
    expect(listed).toMatchObject({ _locked: true });

    const byAdmin = await lock([b!], roles.tokens.admin, 'unlock-rows/');
    expect(byAdmin.statusCode, byAdmin.body).toBe(200);
    expect(await row(b!)).toMatchObject({ _locked: false, _locked_by: roles.users.admin.virtualId });
    expect(await row(a!)).toMatchObject({ _locked: true });
  });

  const tryWrites = async (token: string, id: string) => {
    const update = await g.call('PUT', 'rows/', { table_name: 'Tasks', updates: [{ row_id: id, row: { Title: 'changed' } }] }, token);
    const single = await g.call('PUT', 'rows/', { table_name: 'Tasks', row_id: id, row: { Title: 'changed' } }, token);
    const sqlUpdate = await g.call('POST', 'sql/', { sql: "UPDATE Tasks SET Title = 'changed' WHERE Title = 'locked'" }, token);
    const sqlDelete = await g.call('POST', 'sql/', { sql: "DELETE FROM Tasks WHERE Title = 'locked'" }, token);
    const remove = await g.call('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [id] }, token);
    return [update, single, sqlUpdate, sqlDelete, remove];
  };

  it.each(['rw', 'api-rw'] as GatewayRole[])('%s (no admin rights) may not update or delete a locked row: 403, nothing changes', async (role) => {
    const [id, free] = await appendRows(g, 'Tasks', [{ Title: 'locked' }, { Title: 'free' }]);
    expect((await lock([id!])).statusCode).toBe(200);
    const count = await storedRowCount(g);
    for (const res of await tryWrites(roles.tokens[role], id!)) {
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toEqual({ error_msg: `Row ${id} is locked: only the base's owner and admins may change or delete it.` });
    }
    // A batch with one locked row is refused whole.
    const mixed = await g.call('PUT', 'rows/', { table_name: 'Tasks', updates: [{ row_id: free, row: { Title: 'x' } }, { row_id: id, row: { Title: 'x' } }] }, roles.tokens[role]);
    expect(mixed.statusCode).toBe(403);
    expect(await row(free!)).toMatchObject({ Title: 'free' });
    expect(await row(id!)).toMatchObject({ Title: 'locked', _locked: true });
    expect(await storedRowCount(g)).toBe(count);
    // Nor may it lift the lock itself (issue #24: it could then update the row): 403, still locked.
    const unlock = await lock([id!], roles.tokens[role], 'unlock-rows/');
    expect(unlock.statusCode, unlock.body).toBe(403);
    expect(unlock.json()).toEqual({ error_msg: "Only the base's owner and admins may unlock rows." });
    expect(await row(id!)).toMatchObject({ Title: 'locked', _locked: true });
    const still = await g.call('PUT', 'rows/', { table_name: 'Tasks', row_id: id, row: { Title: 'changed' } }, roles.tokens[role]);
    expect(still.statusCode).toBe(403);
    // Unlocked by the owner, the same caller may change it.
    expect((await lock([id!], undefined, 'unlock-rows/')).statusCode).toBe(200);
    const after = await g.call('PUT', 'rows/', { table_name: 'Tasks', row_id: id, row: { Title: 'changed' } }, roles.tokens[role]);
    expect(after.statusCode, after.body).toBe(200);
    expect(await row(id!)).toMatchObject({ Title: 'changed', _locked: false });
    await g.call('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [id, free] });
  });

  it.each(['owner', 'admin'] as GatewayRole[])('%s (admin rights) may update and delete locked rows, also by SQL', async (role) => {
    const [id, other] = await appendRows(g, 'Tasks', [{ Title: 'mine' }, { Title: 'locked' }]);
    expect((await lock([id!, other!])).statusCode).toBe(200);
    const token = roles.tokens[role];
    expect((await g.call('PUT', 'rows/', { table_name: 'Tasks', row_id: id, row: { Title: 'edited' } }, token)).statusCode).toBe(200);
    expect(await row(id!)).toMatchObject({ Title: 'edited', _locked: true });
    const sqlUpdate = await g.call('POST', 'sql/', { sql: "UPDATE Tasks SET Title = 'by sql' WHERE Title = 'locked'" }, token);
    expect(sqlUpdate.statusCode, sqlUpdate.body).toBe(200);
    expect(await row(other!)).toMatchObject({ Title: 'by sql' });
    const sqlDelete = await g.call('POST', 'sql/', { sql: "DELETE FROM Tasks WHERE Title = 'by sql'" }, token);
    expect(sqlDelete.statusCode, sqlDelete.body).toBe(200);
    const del = await g.call('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [id] }, token);
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ success: true, deleted_rows: 1 });
  });

  it.each(WRITE_ROLES)('%s may lock; only owner and admin may unlock', async (role) => {
    const [id] = await appendRows(g, 'Tasks', [{ Title: role }]);
    expect((await lock([id!], roles.tokens[role])).statusCode).toBe(200);
    expect((await row(id!))._locked).toBe(true);
    const mayUnlock = role === 'owner' || role === 'admin';
    expect((await lock([id!], roles.tokens[role], 'unlock-rows/')).statusCode).toBe(mayUnlock ? 200 : 403);
    expect((await row(id!))._locked).toBe(!mayUnlock);
  });

  it.each(READ_ONLY_ROLES)('%s (read-only) may not lock or unlock: 403, nothing changes', async (role) => {
    const [id] = await appendRows(g, 'Tasks', [{ Title: 'ro' }]);
    for (const path of ['lock-rows/', 'unlock-rows/']) {
      const res = await lock([id!], roles.tokens[role], path);
      expect(res.statusCode).toBe(403);
    }
    expect((await row(id!))._locked).toBe(null);
  });

  it('refuses bad inputs with a 4xx naming the problem, and changes nothing', async () => {
    const [id] = await appendRows(g, 'Tasks', [{ Title: 'bad' }]);
    const cases: [unknown, number, string][] = [
      [{ table_name: 'Tasks' }, 400, 'row_ids invalid.'],
      [{ table_name: 'Tasks', row_ids: [] }, 400, 'row_ids invalid.'],
      [{ table_name: 'Tasks', row_ids: id }, 400, 'row_ids invalid.'],
      [{ table_name: 'Tasks', row_ids: [id, 7] }, 400, 'row_ids invalid.'],
      [{ table_name: 'Tasks', row_ids: Array.from({ length: 1001 }, (_, i) => `r${i}`) }, 400, 'Number of rows to lock exceeds 1000.'],
      [{ table_name: 'Nope', row_ids: [id] }, 404, 'table Nope not found'],
      [{ table_name: 'Tasks', row_ids: [id, 'AAAAAAAAAAAAAAAAAAAAAA'] }, 404, 'row AAAAAAAAAAAAAAAAAAAAAA not found'],
    ];
    for (const [body, status, message] of cases) {
      const res = await g.call('PUT', 'lock-rows/', body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(status);
      expect(res.json()).toEqual({ error_msg: message });
    }
    expect((await row(id!))._locked).toBe(null);
  });
});
