import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { addTable, appendRows, through, type Gateway } from './rows.fixtures.js';
import { addRedTeamView } from './view-share.fixtures.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * The permission matrix for the ways of access groups add: a role in the group that owns the base's
 * workspace, a share with a group, and a view shared with a user or a group — on the Account-Token
 * routes, the Base-Token exchange, the gateway (rows, SQL, structure) and the live channel's scope.
 */
describe.each(DIALECTS)('access through groups and view shares (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser; // owns the personal base `personal`
  let gOwner: TestUser;
  let gAdmin: TestUser;
  let gMember: TestUser;
  let outsider: TestUser;
  let viewer: TestUser; // has only a view shared with them
  let groupId: number;
  let groupWorkspace: number;
  let personal: TestBase;
  let g: Gateway; // the owner's gateway on `personal`
  let tableId: string;
  let viewId: string;

  const req = (user: TestUser, method: Method, url: string, payload?: object) => t.request({ method, url, token: user.token, ...(payload ? { payload } : {}) });
  const tokenOf = async (user: TestUser, base: Pick<TestBase, 'workspaceId' | 'name'>) => {
    const res = await req(user, 'GET', basePath(base, 'access-token/'));
    return res.statusCode === 200 ? (res.json().access_token as string) : res.statusCode;
  };
  const permissionOf = async (user: TestUser, base: Pick<TestBase, 'workspaceId' | 'name'>) => {
    const token = await tokenOf(user, base);
    return typeof token === 'number' ? token : (decodeJwt(token).permission as string);
  };
  const gw = (token: string, method: Method, suffix: string, payload?: object, base = personal) =>
    t.request({ method, url: `/api-gateway/api/v2/dtables/${base.uuid}/${suffix}`, token, ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t, { name: 'Owner' });
    gOwner = await createUser(t, { name: 'G Owner' });
    gAdmin = await createUser(t, { name: 'G Admin' });
    gMember = await createUser(t, { name: 'G Member' });
    outsider = await createUser(t, { name: 'Outsider' });
    viewer = await createUser(t, { name: 'Viewer' });
    const group = await req(gOwner, 'POST', '/api/v2.1/groups/', { name: 'Matrix team' });
    groupId = group.json().id;
    for (const u of [gAdmin, gMember]) expect((await req(gOwner, 'POST', `/api/v2.1/groups/${groupId}/members/`, { email: u.email })).statusCode).toBe(201);
    await req(gOwner, 'PUT', `/api/v2.1/groups/${groupId}/members/${gAdmin.email}/`, { is_admin: 'true' });
    groupWorkspace = (await req(gMember, 'GET', '/api/v2.1/workspaces/')).json().workspace_list.find((w: { group_id?: number }) => w.group_id === groupId).id;

    personal = await createBase(t, owner, 'personal');
    g = through(t, { owner, base: personal, token: (await tokenOf(owner, personal)) as string });
    const table = await addTable(g, 'People', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Team', column_type: 'text' },
      { column_name: 'Salary', column_type: 'number' },
    ]);
    tableId = table._id;
    await appendRows(g, 'People', [
      { Name: 'Ann', Team: 'red', Salary: 1 },
      { Name: 'Ben', Team: 'blue', Salary: 2 },
      { Name: 'Cid', Team: 'red', Salary: 3 },
    ]);
    viewId = await addRedTeamView(g);
  });
  afterAll(() => t.close());

  const groupBase = async (name: string, by = gMember): Promise<TestBase> => {
    const res = await req(by, 'POST', '/api/v2.1/dtables/', { name, workspace_id: groupWorkspace });
    expect(res.statusCode, res.body).toBe(201);
    const b = res.json().table;
    return { id: b.id, uuid: b.uuid, name: b.name, workspaceId: b.workspace_id };
  };

  it("lists the group's workspace with its owner, admins and bases for every member, and for nobody else", async () => {
    const base = await groupBase('listed');
    const list = (await req(gMember, 'GET', '/api/v2.1/workspaces/')).json().workspace_list;
    const ws = list.find((w: { type: string; group_id?: number }) => w.type === 'group' && w.group_id === groupId);
    expect(ws).toMatchObject({
      id: groupWorkspace,
      name: 'Matrix team',
      type: 'group',
      group_id: groupId,
      group_name: 'Matrix team',
      group_owner: gOwner.virtualId,
      group_admins: [gOwner.virtualId, gAdmin.virtualId],
      group_member_count: 3,
    });
    expect(ws.table_list.map((b: { uuid: string }) => b.uuid)).toContain(base.uuid);
    const others = (await req(outsider, 'GET', '/api/v2.1/workspaces/')).json().workspace_list;
    expect(others.some((w: { type: string }) => w.type === 'group')).toBe(false);
    expect((await req(outsider, 'POST', '/api/v2.1/dtables/', { name: 'intruder', workspace_id: groupWorkspace })).statusCode).toBe(403);
    const groupShared = (await req(gAdmin, 'GET', '/api/v2.1/dtables/group-shared/')).json().group_shared_dtables;
    expect(groupShared[String(groupId)].map((b: { uuid: string }) => b.uuid)).toContain(base.uuid);
  });

  it('group roles on the group’s bases: owner and admins manage, members read and write, outsiders nothing', async () => {
    const base = await groupBase('roles');
    expect(await permissionOf(gOwner, base)).toBe('rw');
    expect(await permissionOf(gAdmin, base)).toBe('rw');
    expect(await permissionOf(gMember, base)).toBe('rw');
    expect(await permissionOf(outsider, base)).toBe(403);

    // Managing shares, API-Tokens, renaming: admins yes, members no.
    for (const suffix of ['share/', 'group-shares/', 'api-tokens/', 'user-view-shares/']) {
      expect((await req(gMember, 'GET', basePath(base, suffix))).statusCode, suffix).toBe(403);
      expect((await req(gAdmin, 'GET', basePath(base, suffix))).statusCode, suffix).toBe(200);
      expect((await req(outsider, 'GET', basePath(base, suffix))).statusCode, suffix).toBe(403);
    }
    const rename = (u: TestUser, from: string, to: string) => req(u, 'PUT', `/api/v2.1/workspace/${base.workspaceId}/dtable/`, { name: from, new_name: to });
    expect((await rename(gMember, 'roles', 'x')).statusCode).toBe(403);
    expect((await rename(gAdmin, 'roles', 'roles 2')).statusCode).toBe(200);
    // Deleting: members no, admins yes.
    const del = (u: TestUser) => req(u, 'DELETE', `/api/v2.1/workspace/${base.workspaceId}/dtable/`, { name: 'roles 2' });
    expect((await del(gMember)).statusCode).toBe(403);
    expect((await del(outsider)).statusCode).toBe(403);
    expect((await del(gAdmin)).statusCode).toBe(200);
  });

  it('a base shared with a group gives every member the share’s permission, enforced on the gateway and SQL', async () => {
    // The sharer must be in the group; the base is theirs (a personal one).
    const sharer = await createUser(t);
    await req(gOwner, 'POST', `/api/v2.1/groups/${groupId}/members/`, { email: sharer.email });
    const shared = await createBase(t, sharer, 'shared with group');
    const add = await req(sharer, 'POST', basePath(shared, 'group-shares/'), { group_id: String(groupId), permission: 'r' });
    expect(add.statusCode, add.body).toBe(200);
    expect(add.json().dtable_group_share).toEqual({ group_id: groupId, group_name: 'Matrix team', permission: 'r' });
    expect((await req(sharer, 'GET', basePath(shared, 'group-shares/'))).json()).toEqual({
      dtable_group_share_list: [{ group_id: groupId, group_name: 'Matrix team', permission: 'r' }],
    });
    for (const u of [gOwner, gAdmin, gMember]) expect(await permissionOf(u, shared)).toBe('r');
    expect(await permissionOf(outsider, shared)).toBe(403);

    const readToken = (await tokenOf(gMember, shared)) as string;
    expect((await gw(readToken, 'GET', 'rows/?table_name=Table1', undefined, shared)).statusCode).toBe(200);
    expect((await gw(readToken, 'POST', 'rows/', { table_name: 'Table1', rows: [{}] }, shared)).statusCode).toBe(403);
    expect((await gw(readToken, 'POST', 'sql/', { sql: 'select * from Table1' }, shared)).statusCode).toBe(200);
    expect((await gw(readToken, 'POST', 'sql/', { sql: "insert into Table1 (Name) values ('x')" }, shared)).statusCode).toBe(403);

    const update = await req(sharer, 'PUT', basePath(shared, `group-shares/${groupId}/`), { permission: 'rw' });
    expect(update.statusCode).toBe(200);
    // The old token was issued under the old share: revoked; a new one carries rw.
    expect((await gw(readToken, 'GET', 'rows/?table_name=Table1', undefined, shared)).statusCode).toBe(403);
    expect(await permissionOf(gMember, shared)).toBe('rw');
    // `admin` through a group lets members manage the base's shares (not delete it).
    await req(sharer, 'PUT', basePath(shared, `group-shares/${groupId}/`), { permission: 'admin' });
    expect((await req(gMember, 'GET', basePath(shared, 'share/'))).statusCode).toBe(200);
    expect((await req(gMember, 'DELETE', `/api/v2.1/workspace/${shared.workspaceId}/dtable/`, { name: shared.name })).statusCode).toBe(403);

    expect((await req(sharer, 'DELETE', basePath(shared, `group-shares/${groupId}/`))).statusCode).toBe(200);
    expect(await permissionOf(gMember, shared)).toBe(403);
  });

  it('group shares: bad input and strangers get 4xx and change nothing', async () => {
    const base = await createBase(t, owner, 'share errors');
    const count = async () => Number((await t.container.db.selectFrom('base_group_shares').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    expect((await req(owner, 'POST', basePath(base, 'group-shares/'), { group_id: groupId, permission: 'owner' })).statusCode).toBe(400);
    expect((await req(owner, 'POST', basePath(base, 'group-shares/'), { group_id: 'x', permission: 'r' })).statusCode).toBe(400);
    expect((await req(owner, 'POST', basePath(base, 'group-shares/'), { permission: 'r' })).statusCode).toBe(400);
    expect((await req(owner, 'POST', basePath(base, 'group-shares/'), { group_id: 999999, permission: 'r' })).statusCode).toBe(404);
    // Not a member of the group: may not share with it.
    expect((await req(owner, 'POST', basePath(base, 'group-shares/'), { group_id: groupId, permission: 'r' })).statusCode).toBe(400);
    expect((await req(outsider, 'POST', basePath(base, 'group-shares/'), { group_id: groupId, permission: 'r' })).statusCode).toBe(403);
    expect((await req(owner, 'PUT', basePath(base, `group-shares/${groupId}/`), { permission: 'r' })).statusCode).toBe(404);
    expect((await req(owner, 'DELETE', basePath(base, `group-shares/${groupId}/`))).statusCode).toBe(404);
    expect(await count()).toBe(before);
  });

  it('a view shared with a user grants exactly the view: its rows, its columns, nothing else', async () => {
    expect(await permissionOf(viewer, personal)).toBe(403);
    const share = await req(owner, 'POST', basePath(personal, 'user-view-shares/'), { table_id: tableId, view_id: viewId, permission: 'r', to_user: viewer.email });
    expect(share.statusCode, share.body).toBe(200);
    expect(share.json()).toMatchObject({
      id: expect.any(Number),
      dtable_name: 'personal',
      from_user: owner.virtualId,
      from_user_name: 'Owner',
      to_user: viewer.virtualId,
      to_user_name: 'Viewer',
      permission: 'r',
      table_id: tableId,
      view_id: viewId,
      shared_name: null,
    });
    const shareId = share.json().id;
    expect((await req(viewer, 'GET', '/api/v2.1/dtables/view-shares-user-shared/')).json().view_share_list.map((s: { id: number }) => s.id)).toEqual([shareId]);
    // Still no access to the base itself.
    expect(await permissionOf(viewer, personal)).toBe(403);

    const res = await req(viewer, 'GET', basePath(personal, `user-view-share-access-token/?user_view_share_id=${shareId}`));
    expect(res.statusCode, res.body).toBe(200);
    const token = res.json().access_token as string;
    expect(decodeJwt(token).permission).toBe('r');

    const rows = await gw(token, 'GET', 'rows/?table_name=People&convert_keys=true');
    expect(rows.statusCode, rows.body).toBe(200);
    const listed = rows.json().rows as Array<Record<string, unknown>>;
    expect(listed.map((r) => r.Name)).toEqual(['Ann', 'Cid']);
    for (const row of listed) expect(row).not.toHaveProperty('Salary');
    // Naming another view of the table, or reaching elsewhere: refused.
    expect((await gw(token, 'GET', 'rows/?table_name=People&view_id=0000')).statusCode).toBe(403);
    expect((await gw(token, 'GET', 'rows/?table_name=Table1')).statusCode).toBe(403);
    const filtered = await gw(token, 'POST', 'filtered-rows/?table_name=People', { filters: [{ column_name: 'Name', filter_predicate: 'is', filter_term: 'Ben' }] });
    expect(filtered.statusCode).toBe(200);
    expect(filtered.json().rows).toEqual([]);
    const firstRowId = String(listed[0]!._id);
    for (const [method, suffix, payload] of [
      ['GET', `rows/${firstRowId}/?table_name=People`],
      ['GET', 'metadata/?table_name=Table1'],
      ['GET', 'views/?table_name=Table1'],
      ['POST', 'sql/', { sql: 'select Salary from People' }],
      ['POST', 'sql/', { sql: 'select * from Table1' }],
      ['POST', 'query-links/', { table_id: tableId, link_column: 'x', rows: [] }],
      ['GET', 'changes/'],
      ['POST', 'rows/', { table_name: 'People', rows: [{ Name: 'Dan', Team: 'red' }] }],
    ] as Array<[Method, string, object?]>) {
      expect((await gw(token, method, suffix, payload)).statusCode, `${method} ${suffix}`).toBe(403);
    }
    // Its table's metadata and SQL are open, limited to the view (view-share-metadata.test.ts, view-share-sql.test.ts).
    expect((await gw(token, 'GET', 'views/?table_name=People')).json().views.map((v: { name: string }) => v.name)).toEqual(['Red team']);
    const sql = await gw(token, 'POST', 'sql/', { sql: 'select Name from People', convert_keys: true });
    expect(sql.json().results.map((r: { Name: string }) => r.Name)).toEqual(['Ann', 'Cid']);

    // Read-write: rows of the view's table can be written; still nothing else.
    const update = await req(owner, 'PUT', basePath(personal, `user-view-shares/${shareId}/`), { permission: 'rw' });
    expect(update.statusCode).toBe(200);
    expect(update.json().permission).toBe('rw');
    expect((await gw(token, 'GET', 'rows/?table_name=People')).statusCode).toBe(403); // revoked by the change
    const rw = (await req(viewer, 'GET', basePath(personal, `user-view-share-access-token/?user_view_share_id=${shareId}`))).json().access_token as string;
    expect((await gw(rw, 'POST', 'rows/', { table_name: 'People', rows: [{ Name: 'Dan', Team: 'red' }] })).statusCode).toBe(200);
    expect((await gw(rw, 'POST', 'rows/', { table_name: 'Table1', rows: [{}] })).statusCode).toBe(403);
    expect((await gw(rw, 'POST', 'sql/', { sql: "update People set Salary = 9" })).statusCode).toBe(403);

    // The recipient leaves: the token is revoked and no new one is issued.
    expect((await req(viewer, 'DELETE', `/api/v2.1/dtables/view-shares-user-shared/${shareId}/`)).statusCode).toBe(200);
    expect((await gw(rw, 'GET', 'rows/?table_name=People')).statusCode).toBe(403);
    expect((await req(viewer, 'GET', basePath(personal, `user-view-share-access-token/?user_view_share_id=${shareId}`))).statusCode).toBe(404);
  });

  it('a read-write view share writes only the rows the view shows and only its visible columns', async () => {
    const editor = await createUser(t, { name: 'View editor' });
    const share = await req(owner, 'POST', basePath(personal, 'user-view-shares/'), { table_id: tableId, view_id: viewId, permission: 'rw', to_user: editor.email });
    expect(share.statusCode, share.body).toBe(200);
    const rw = (await req(editor, 'GET', basePath(personal, `user-view-share-access-token/?user_view_share_id=${share.json().id}`))).json().access_token as string;
    const all = (await g.call('GET', 'rows/?table_name=People&convert_keys=true')).json().rows as Array<Record<string, unknown>>;
    const idOf = (name: string) => String(all.find((r) => r.Name === name)!._id);
    const tables = (await g.call('GET', 'metadata/')).json().metadata.tables as Array<{ _id: string; columns: Array<{ name: string; key: string }> }>;
    const salaryKey = tables.find((tb) => tb._id === tableId)!.columns.find((c) => c.name === 'Salary')!.key;
    const cells = async () => Object.fromEntries(((await g.call('GET', 'rows/?table_name=People&convert_keys=true')).json().rows as Array<Record<string, unknown>>).map((r) => [r.Name, [r.Team, r.Salary]]));
    const before = await cells();
    const refused = async (method: Method, payload: object, says: string) => {
      const res = await gw(rw, method, 'rows/', payload);
      expect(res.statusCode, `${method} ${JSON.stringify(payload)}: ${res.body}`).toBe(403);
      expect(res.json().error_msg).toContain(says);
    };
    // A row the view does not show (Ben is blue), a row that does not exist, a hidden column, another table.
    await refused('PUT', { table_name: 'People', updates: [{ row_id: idOf('Ben'), row: { Name: 'Benjamin' } }] }, `row ${idOf('Ben')} is not in it`);
    await refused('PUT', { table_name: 'People', updates: [{ row_id: idOf('Ann'), row: { Name: 'Anna' } }, { row_id: idOf('Ben'), row: { Name: 'B' } }] }, 'is not in it');
    await refused('PUT', { table_id: tableId, row_id: 'AAAAAAAAAAAAAAAAAAAAAA', row: { Name: 'x' } }, 'is not in it');
    await refused('PUT', { table_name: 'People', updates: [{ row_id: idOf('Ann'), row: { Salary: 100 } }] }, 'column Salary is hidden');
    await refused('PUT', { table_name: 'People', updates: [{ row_id: idOf('Ann'), row: { [salaryKey]: 100 } }] }, 'column Salary is hidden');
    await refused('DELETE', { table_name: 'People', row_ids: [idOf('Cid'), idOf('Ben')] }, `row ${idOf('Ben')} is not in it`);
    await refused('POST', { table_name: 'People', rows: [{ Name: 'Eve', Team: 'red', Salary: 5 }] }, 'column Salary is hidden');
    // Refused writes changed nothing (the refusal comes inside the write's transaction, before any row).
    expect(await cells()).toEqual(before);

    // Rows the view shows, columns it shows: written.
    const ok = await gw(rw, 'PUT', 'rows/', { table_name: 'People', updates: [{ row_id: idOf('Ann'), row: { Name: 'Anna' } }] });
    expect(ok.statusCode, ok.body).toBe(200);
    const added = await gw(rw, 'POST', 'rows/', { table_id: tableId, rows: [{ Name: 'Eve', Team: 'red' }] });
    expect(added.statusCode, added.body).toBe(200);
    // A row moved out of the view by the write cannot be written again through the view.
    expect((await gw(rw, 'PUT', 'rows/', { table_name: 'People', updates: [{ row_id: idOf('Cid'), row: { Team: 'blue' } }] })).statusCode).toBe(200);
    await refused('DELETE', { table_name: 'People', row_ids: [idOf('Cid')] }, `row ${idOf('Cid')} is not in it`);
    const eve = String(added.json().row_ids[0]._id);
    const removed = await gw(rw, 'DELETE', 'rows/', { table_name: 'People', row_ids: [eve] });
    expect(removed.statusCode, removed.body).toBe(200);
    expect(removed.json().deleted_rows).toBe(1);
    const after = await cells();
    expect(after).toMatchObject({ Anna: ['red', 1], Ben: ['blue', 2], Cid: ['blue', 3] });
    expect(after).not.toHaveProperty('Eve');
    // Restore the fixture for the other tests.
    expect((await g.call('PUT', 'rows/', { table_name: 'People', updates: [{ row_id: idOf('Ann'), row: { Name: 'Ann' } }, { row_id: idOf('Cid'), row: { Team: 'red' } }] })).statusCode).toBe(200);
  });

  it("a trashed group base is in the group's trash, listed and restored by its owner and admins only", async () => {
    const base = await groupBase('trash me');
    const other = await createBase(t, gOwner, 'personal of g owner');
    const groupTrash = (u: TestUser, query = '') => req(u, 'GET', `/api/v2.1/groups/${groupId}/trash-dtables/${query}`);
    const listedIn = async (u: TestUser) => ((await groupTrash(u)).json().trash_dtable_list as Array<{ uuid: string }>).map((b) => b.uuid);
    const earlier = await listedIn(gAdmin); // group bases trashed by the tests before
    // A member may not delete a group base; an admin may.
    expect((await req(gMember, 'DELETE', `/api/v2.1/workspace/${groupWorkspace}/dtable/`, { name: base.name })).statusCode).toBe(403);
    expect((await req(gAdmin, 'DELETE', `/api/v2.1/workspace/${groupWorkspace}/dtable/`, { name: base.name })).statusCode).toBe(200);
    expect((await req(gOwner, 'DELETE', `/api/v2.1/workspace/${other.workspaceId}/dtable/`, { name: other.name })).statusCode).toBe(200);

    const listed = await groupTrash(gAdmin);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().count).toBe(earlier.length + 1);
    expect(listed.json().trash_dtable_list[0]).toMatchObject({ uuid: base.uuid, name: 'trash me', workspace_id: groupWorkspace, deleted: true, delete_time: expect.any(String) });
    expect(await listedIn(gOwner)).toEqual([base.uuid, ...earlier]);
    // The group's base is not in its owner's personal trash; their own trashed base is, and not in the group's.
    const personalTrash = (await req(gOwner, 'GET', '/api/v2.1/trash-dtables/')).json().trash_dtable_list.map((b: { uuid: string }) => b.uuid);
    expect(personalTrash).toEqual([other.uuid]);
    // Members: 403; outsiders and unknown groups: 404; bad ids: 400 or 404. Nothing changes.
    expect((await groupTrash(gMember)).statusCode).toBe(403);
    expect((await req(gMember, 'PUT', `/api/v2.1/groups/${groupId}/trash-dtables/${base.uuid}/`)).statusCode).toBe(403);
    expect((await groupTrash(outsider)).statusCode).toBe(404);
    expect((await req(outsider, 'PUT', `/api/v2.1/groups/${groupId}/trash-dtables/${base.uuid}/`)).statusCode).toBe(404);
    expect((await req(gAdmin, 'GET', '/api/v2.1/groups/999999/trash-dtables/')).statusCode).toBe(404);
    expect((await req(gAdmin, 'GET', '/api/v2.1/groups/abc/trash-dtables/')).statusCode).toBe(400);
    expect((await req(gAdmin, 'PUT', `/api/v2.1/groups/${groupId}/trash-dtables/not-a-uuid/`)).statusCode).toBe(404);
    // Another trash's base cannot be restored through the group's.
    expect((await req(gOwner, 'PUT', `/api/v2.1/groups/${groupId}/trash-dtables/${other.uuid}/`)).statusCode).toBe(404);
    expect(await listedIn(gAdmin)).toEqual([base.uuid, ...earlier]);
    expect(await permissionOf(gMember, base)).toBe(404);

    // An admin restores it: back in the group's workspace, every member's again.
    const restored = await req(gAdmin, 'PUT', `/api/v2.1/groups/${groupId}/trash-dtables/${base.uuid.replace(/-/g, '')}/`);
    expect(restored.statusCode, restored.body).toBe(200);
    expect(restored.json()).toEqual({ success: true });
    expect(await listedIn(gAdmin)).toEqual(earlier);
    expect(await permissionOf(gMember, base)).toBe('rw');
    expect((await req(gAdmin, 'PUT', `/api/v2.1/groups/${groupId}/trash-dtables/${base.uuid}/`)).statusCode).toBe(404);
  });

  it('a view shared with a group reaches its members only, and leaves with a removed member', async () => {
    const groupOwned = await createBase(t, gOwner, 'group view base');
    const token = (await tokenOf(gOwner, groupOwned)) as string;
    const tbl = await through(t, { owner: gOwner, base: groupOwned, token }).call('GET', 'metadata/');
    const tid = tbl.json().metadata.tables[0]._id as string;
    const share = await req(gOwner, 'POST', basePath(groupOwned, 'group-view-shares/'), { table_id: tid, view_id: '0000', permission: 'r', to_group_ids: [groupId] });
    expect(share.statusCode, share.body).toBe(200);
    const shareId = share.json().group_view_share_list[0].id;
    expect(share.json().group_view_share_list[0]).toMatchObject({ to_group_id: String(groupId), to_group_name: 'Matrix team', permission: 'r' });
    const views = (await req(gMember, 'GET', '/api/v2.1/dtables/view-shares-group-shared/')).json().group_shared_views;
    expect(views[String(groupId)].map((v: { view_share_id: number }) => v.view_share_id)).toEqual([shareId]);

    const url = basePath(groupOwned, `group-view-share-access-token/?group_view_share_id=${shareId}`);
    expect((await req(outsider, 'GET', url)).statusCode).toBe(404);
    const memberToken = (await req(gMember, 'GET', url)).json().access_token as string;
    expect((await gw(memberToken, 'GET', `rows/?table_id=${tid}`, undefined, groupOwned)).statusCode).toBe(200);

    // Bad input changes nothing.
    for (const body of [
      { table_id: tid, view_id: '0000', permission: 'admin', to_group_ids: [groupId] },
      { table_id: 'nope', view_id: '0000', permission: 'r', to_group_ids: [groupId] },
      { table_id: tid, view_id: 'nope', permission: 'r', to_group_ids: [groupId] },
      { table_id: tid, view_id: '0000', permission: 'r', to_group_ids: ['x'] },
      { table_id: tid, view_id: '0000', permission: 'r', to_group_ids: [groupId] },
    ]) {
      const res = await req(gOwner, 'POST', basePath(groupOwned, 'group-view-shares/'), body);
      expect(res.statusCode, JSON.stringify(body)).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
    }
    expect((await req(gOwner, 'GET', basePath(groupOwned, 'group-view-shares/'))).json().group_view_share_list).toHaveLength(1);

    // Removing the member revokes the view token at once.
    const extra = await createUser(t);
    await req(gOwner, 'POST', `/api/v2.1/groups/${groupId}/members/`, { email: extra.email });
    const extraToken = (await req(extra, 'GET', url)).json().access_token as string;
    expect((await gw(extraToken, 'GET', `rows/?table_id=${tid}`, undefined, groupOwned)).statusCode).toBe(200);
    expect((await req(gAdmin, 'DELETE', `/api/v2.1/groups/${groupId}/members/${extra.email}/`)).statusCode).toBe(200);
    expect((await gw(extraToken, 'GET', `rows/?table_id=${tid}`, undefined, groupOwned)).statusCode).toBe(403);
    expect((await req(extra, 'GET', url)).statusCode).toBe(404);
    expect((await gw(memberToken, 'GET', `rows/?table_id=${tid}`, undefined, groupOwned)).statusCode).toBe(200);
  });

  it('removing a member revokes their Base-Tokens on the group’s bases and group-shared bases at once; others keep theirs', async () => {
    const leaver = await createUser(t);
    await req(gOwner, 'POST', `/api/v2.1/groups/${groupId}/members/`, { email: leaver.email });
    const inGroup = await groupBase('revocation');
    const shared = await createBase(t, gAdmin, 'revocation shared');
    expect((await req(gAdmin, 'POST', basePath(shared, 'group-shares/'), { group_id: groupId, permission: 'rw' })).statusCode).toBe(200);
    const tokens = [(await tokenOf(leaver, inGroup)) as string, (await tokenOf(leaver, shared)) as string];
    const kept = (await tokenOf(gMember, inGroup)) as string;
    expect((await gw(tokens[0]!, 'GET', 'rows/?table_name=Table1', undefined, inGroup)).statusCode).toBe(200);
    expect((await gw(tokens[1]!, 'GET', 'rows/?table_name=Table1', undefined, shared)).statusCode).toBe(200);

    expect((await req(gMember, 'DELETE', `/api/v2.1/groups/${groupId}/members/${leaver.email}/`)).statusCode).toBe(403); // members cannot remove
    expect((await req(gAdmin, 'DELETE', `/api/v2.1/groups/${groupId}/members/${leaver.email}/`)).statusCode).toBe(200);
    expect((await gw(tokens[0]!, 'GET', 'rows/?table_name=Table1', undefined, inGroup)).statusCode).toBe(403);
    expect((await gw(tokens[1]!, 'GET', 'rows/?table_name=Table1', undefined, shared)).statusCode).toBe(403);
    expect(await permissionOf(leaver, inGroup)).toBe(403);
    expect(await permissionOf(leaver, shared)).toBe(403);
    expect((await gw(kept, 'GET', 'rows/?table_name=Table1', undefined, inGroup)).statusCode).toBe(200);
  });

  it("counts group members among a base's related users (mention pickers, rule recipients); view-share recipients are not", async () => {
    const base = await groupBase('related');
    const related = async (b: TestBase) =>
      ((await req(gOwner, 'GET', `/api/v2.1/dtables/${b.uuid}/related-users/`)).json().user_list as Array<{ email: string }>).map((u) => u.email);
    const members = ((await req(gOwner, 'GET', `/api/v2.1/groups/${groupId}/members/`)).json() as Array<{ email: string }>).map((m) => m.email);
    expect(members.slice(0, 3)).toEqual([gOwner.virtualId, gAdmin.virtualId, gMember.virtualId]);
    expect(await related(base)).toEqual(members);
    const shared = await createBase(t, gOwner, 'related shared');
    await req(gOwner, 'POST', basePath(shared, 'share/'), { email: outsider.email, permission: 'r' });
    expect(await related(shared)).toEqual([gOwner.virtualId, outsider.virtualId]);
    await req(gOwner, 'POST', basePath(shared, 'group-shares/'), { group_id: groupId, permission: 'r' });
    expect(await related(shared)).toEqual([gOwner.virtualId, outsider.virtualId, ...members.filter((m) => m !== gOwner.virtualId)]);
    expect((await req(outsider, 'GET', `/api/v2.1/dtables/${base.uuid}/related-users/`)).statusCode).toBe(403);
  });

  it('view shares: bad input and strangers get 4xx and change nothing', async () => {
    const count = async () => Number((await t.container.db.selectFrom('view_shares').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const before = await count();
    const post = (u: TestUser, body: object) => req(u, 'POST', basePath(personal, 'user-view-shares/'), body);
    const ok = { table_id: tableId, view_id: viewId, permission: 'r', to_user: outsider.email };
    expect((await post(owner, { ...ok, permission: 'admin' })).statusCode).toBe(400);
    expect((await post(owner, { ...ok, table_id: '' })).statusCode).toBe(400);
    expect((await post(owner, { ...ok, view_id: 'zzzz' })).statusCode).toBe(404);
    expect((await post(owner, { ...ok, to_user: 'ghost@example.com' })).statusCode).toBe(404);
    expect((await post(owner, { ...ok, to_user: owner.email })).statusCode).toBe(400);
    expect((await post(owner, { ...ok, shared_name: 'x'.repeat(300) })).statusCode).toBe(400);
    expect((await post(outsider, ok)).statusCode).toBe(403);
    expect((await req(owner, 'PUT', basePath(personal, 'user-view-shares/999999/'), { permission: 'r' })).statusCode).toBe(404);
    expect((await req(owner, 'DELETE', basePath(personal, 'user-view-shares/abc/'))).statusCode).toBe(404);
    expect((await req(viewer, 'GET', basePath(personal, 'user-view-share-access-token/?user_view_share_id=x'))).statusCode).toBe(400);
    expect(await count()).toBe(before);
    // Duplicate: 409, once.
    expect((await post(owner, ok)).statusCode).toBe(200);
    expect((await post(owner, ok)).statusCode).toBe(409);
    expect(await count()).toBe(before + 1);
  });
});
