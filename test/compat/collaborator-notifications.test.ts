import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { READ_ONLY_ROLES, WRITE_ROLES, roleSet, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, through, type Gateway } from '../http/rows.fixtures.js';

describe.each(DIALECTS)('selected_collaborator notifications (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;
  let owner: TestUser;
  let tableId: string;

  const stored = async (user: TestUser) => {
    const rows = await t.container.db.selectFrom('notifications').selectAll().where('user_id', '=', user.id).orderBy('id').execute();
    return rows.map((r) => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }));
  };
  const total = async () => Number((await t.container.db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    const base = await createBase(t, owner);
    roles = await roleSet(t, owner, base);
    g = through(t, { owner, base, token: roles.tokens.owner });
    await addTable(g, 'Tasks', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Assignee', column_type: 'collaborator' },
    ]);
    const meta = (await g.call('GET', 'metadata/')).json().metadata;
    tableId = meta.tables.find((x: { name: string }) => x.name === 'Tasks')._id;
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.container.db.deleteFrom('notifications').execute();
  });

  it('a row insert notifies each member put into the cell (the author too, as the original), not strangers', async () => {
    const { rw, r, none } = roles.users;
    const [rowId] = await appendRows(g, 'Tasks', [{ Title: 'a', Assignee: [rw.virtualId, owner.virtualId, none.virtualId, r.virtualId] }]);
    for (const user of [rw, r]) {
      const notes = await stored(user);
      expect(notes).toHaveLength(1);
      expect(notes[0]).toMatchObject({ msg_type: 'selected_collaborator', base_id: g.base.id, seen: 0 });
      expect(notes[0]!.detail).toEqual({ author: owner.virtualId, row_id: rowId, table_id: tableId });
      expect(notes[0]!.email_due_at).not.toBeNull();
    }
    // The author put themselves in: notified as well (the original's 6.0.10 does so).
    expect((await stored(owner)).map((n) => [n.msg_type, n.detail])).toEqual([['selected_collaborator', { author: owner.virtualId, row_id: rowId, table_id: tableId }]]);
    expect(await stored(none)).toEqual([]);

    // The recipient sees it in the base's inbox in the contract shape.
    const res = await g.call('GET', 'notifications/', undefined, roles.tokens.rw);
    expect(res.statusCode, res.body).toBe(200);
    const list = res.json().notification_list;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ msg_type: 'selected_collaborator', username: rw.virtualId, seen: 0 });
    expect(list[0].detail).toMatchObject({ author: owner.virtualId, row_id: rowId, table_id: tableId });
  });

  it('an update notifies only the users added, not those already in the cell', async () => {
    const { rw, r, admin } = roles.users;
    const [rowId] = await appendRows(g, 'Tasks', [{ Title: 'b', Assignee: [rw.virtualId] }]);
    await t.container.db.deleteFrom('notifications').execute();
    const res = await g.call('PUT', 'rows/', { table_name: 'Tasks', row_id: rowId, row: { Assignee: [rw.virtualId, r.virtualId] } });
    expect(res.statusCode, res.body).toBe(200);
    expect(await stored(rw)).toEqual([]);
    expect((await stored(r)).map((n) => n.detail)).toEqual([{ author: owner.virtualId, row_id: rowId, table_id: tableId }]);

    // Removing someone, or writing the same cell again, notifies nobody.
    await g.call('PUT', 'rows/', { table_name: 'Tasks', row_id: rowId, row: { Assignee: [r.virtualId] } });
    await g.call('PUT', 'rows/', { table_name: 'Tasks', row_id: rowId, row: { Assignee: [r.virtualId], Title: 'b2' } });
    expect(await total()).toBe(1);

    // The batch path (and so every path through the writer) notifies too.
    const batch = await g.call('PUT', 'rows/', { table_name: 'Tasks', updates: [{ row_id: rowId, row: { Assignee: [r.virtualId, admin.virtualId] } }] });
    expect(batch.statusCode, batch.body).toBe(200);
    expect(await stored(admin)).toHaveLength(1);
  });

  it('the SQL endpoint notifies too', async () => {
    const { rw } = roles.users;
    const res = await g.call('POST', 'sql/', { sql: `INSERT INTO Tasks (Title, Assignee) VALUES ('s', '${rw.virtualId}')`, convert_keys: true });
    if (res.statusCode !== 200) throw new Error(`sql insert: ${res.body}`);
    expect((await stored(rw)).map((n) => n.detail.author)).toEqual([owner.virtualId]);
  });

  it.each(WRITE_ROLES)('a writer (%s) who adds someone else notifies them, with themselves as author', async (role) => {
    const target = role === 'rw' ? roles.users.admin : roles.users.rw;
    const res = await g.call('POST', 'rows/', { table_name: 'Tasks', row: { Title: role, Assignee: [target.virtualId] } }, roles.tokens[role]);
    expect(res.statusCode, res.body).toBe(200);
    const notes = await stored(target);
    expect(notes).toHaveLength(1);
    const expectedAuthor = role === 'api-rw' ? 'roles-rw' : roles.users[role as 'owner' | 'admin' | 'rw'].virtualId;
    expect(notes[0]!.detail.author).toBe(expectedAuthor);
  });

  it('a user who puts themselves into a cell is notified too (the original 6.0.10 answers show it)', async () => {
    const { rw } = roles.users;
    const res = await g.call('POST', 'rows/', { table_name: 'Tasks', row: { Title: 'me', Assignee: [rw.virtualId] } }, roles.tokens.rw);
    expect(res.statusCode, res.body).toBe(200);
    expect((await stored(rw)).map((n) => [n.msg_type, n.detail.author, n.detail.table_id])).toEqual([['selected_collaborator', rw.virtualId, tableId]]);
    expect(await total()).toBe(1);
  });

  it.each(READ_ONLY_ROLES)('a read-only token (%s) is refused and notifies nobody', async (role) => {
    const res = await g.call('POST', 'rows/', { table_name: 'Tasks', row: { Title: role, Assignee: [roles.users.rw.virtualId] } }, roles.tokens[role]);
    expect(res.statusCode).toBe(403);
    expect(await total()).toBe(0);
  });

  it('a refused write notifies nobody (the notices roll back with it)', async () => {
    const bad = await g.call('POST', 'batch-append-rows/', { table_name: 'Tasks', rows: [{ Title: 'ok', Assignee: [roles.users.rw.virtualId] }, { Assignee: 42 }] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toHaveProperty('error_msg');
    const missing = await g.call('POST', 'rows/', { table_name: 'Nope', row: { Assignee: [roles.users.rw.virtualId] } });
    expect(missing.statusCode).toBe(404);
    expect(await total()).toBe(0);
  });

  it('the notification takes the rule notifications’ e-mail fallback', async () => {
    await appendRows(g, 'Tasks', [{ Title: 'mail', Assignee: [roles.users.r.virtualId] }]);
    t.clock.advance(24 * 60 * 60_000);
    const report = await t.container.notifications.digest.run(t.clock.now());
    expect(report).toMatchObject({ mails: 1, notifications: 1 });
    const [note] = await stored(roles.users.r);
    expect(note!.email_due_at).toBeNull();
    expect(note!.emailed_at).not.toBeNull();
  });
});
