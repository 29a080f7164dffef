import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;

describe.each(DIALECTS)('groups (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    t = await createTestApp(dialect, { GROUP_MAX_MEMBERS: '3' });
    owner = await createUser(t, { name: 'Owner' });
    bob = await createUser(t, { name: 'Bob' });
    carol = await createUser(t, { name: 'Carol' });
    admin = await createUser(t, { admin: true, name: 'Admin' });
  });
  afterAll(() => t.close());

  const req = (user: TestUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    t.request({ method, url, token: user.token, ...(payload ? { payload } : {}) });
  const newGroup = async (name: string, by = owner) => {
    const res = await req(by, 'POST', '/api/v2.1/groups/', { name });
    expect(res.statusCode, res.body).toBe(201);
    return res.json<{ id: number; name: string }>();
  };
  const groupRows = async () => Number((await t.container.db.selectFrom('groups').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  it('creates a group with the documented shape; its owner is its first admin; lists and gets it', async () => {
    const created = await req(owner, 'POST', '/api/v2.1/groups/', { name: 'Team A' });
    expect(created.statusCode).toBe(201);
    const group = created.json();
    expect(group).toEqual({
      id: expect.any(Number),
      parent_group_id: 0,
      name: 'Team A',
      owner: owner.virtualId,
      created_at: expect.stringMatching(ISO),
      avatar_url: '',
      admins: [owner.virtualId],
      member_count: 1,
    });
    expect((await req(owner, 'GET', '/api/v2.1/groups/')).json()).toContainEqual(group);
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group.id}/`)).json()).toEqual(group);
    // Not a member: 403; unknown: 404.
    expect((await req(bob, 'GET', `/api/v2.1/groups/${group.id}/`)).statusCode).toBe(403);
    expect((await req(bob, 'GET', '/api/v2.1/groups/')).json()).toEqual([]);
    expect((await req(owner, 'GET', '/api/v2.1/groups/999999/')).statusCode).toBe(404);
  });

  it('adds members, lists and searches them with roles, makes an admin, and removes members', async () => {
    const group = await newGroup('Team B');
    const add = await req(owner, 'POST', `/api/v2.1/groups/${group.id}/members/`, { email: bob.email });
    expect(add.statusCode, add.body).toBe(201);
    expect(add.json()).toEqual({
      group_id: group.id,
      name: 'Bob',
      email: bob.virtualId,
      contact_email: bob.email,
      login_id: '',
      avatar_url: '',
      is_admin: false,
      role: 'Member',
    });
    const list = await req(bob, 'GET', `/api/v2.1/groups/${group.id}/members/`);
    expect(list.json().map((m: { role: string; email: string }) => [m.email, m.role])).toEqual([
      [owner.virtualId, 'Owner'],
      [bob.virtualId, 'Member'],
    ]);
    expect((await req(bob, 'GET', `/api/v2.1/groups/${group.id}/members/?is_admin=true`)).json().map((m: { email: string }) => m.email)).toEqual([owner.virtualId]);
    const search = await req(bob, 'GET', `/api/v2.1/groups/${group.id}/search-member/?q=Bo`);
    expect(search.json().map((m: { email: string }) => m.email)).toEqual([bob.virtualId]);
    expect((await req(bob, 'GET', `/api/v2.1/groups/${group.id}/search-member/?q=bo`)).json()).toEqual([]); // case-sensitive

    // A member may not add members or make admins; the owner makes Bob an admin, who then may add.
    expect((await req(bob, 'POST', `/api/v2.1/groups/${group.id}/members/`, { email: carol.email })).statusCode).toBe(403);
    expect((await req(bob, 'PUT', `/api/v2.1/groups/${group.id}/members/${bob.email}/`, { is_admin: 'true' })).statusCode).toBe(403);
    const promote = await req(owner, 'PUT', `/api/v2.1/groups/${group.id}/members/${encodeURIComponent(bob.virtualId)}/`, { is_admin: 'true' });
    expect(promote.statusCode, promote.body).toBe(200);
    expect(promote.json()).toMatchObject({ is_admin: true, role: 'Admin' });
    expect((await req(bob, 'POST', `/api/v2.1/groups/${group.id}/members/`, { email: carol.email })).statusCode).toBe(201);
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group.id}/`)).json()).toMatchObject({ admins: [owner.virtualId, bob.virtualId], member_count: 3 });

    // An admin may not remove the owner; a member leaves; the owner cannot leave.
    expect((await req(bob, 'DELETE', `/api/v2.1/groups/${group.id}/members/${owner.email}/`)).statusCode).toBe(403);
    expect((await req(carol, 'DELETE', `/api/v2.1/groups/${group.id}/members/${carol.email}/`)).statusCode).toBe(200);
    expect((await req(owner, 'DELETE', `/api/v2.1/groups/${group.id}/members/${owner.email}/`)).statusCode).toBe(400);
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group.id}/members/`)).json()).toHaveLength(2);
  });

  it('adds members in bulk, naming each failure, and enforces GROUP_MAX_MEMBERS', async () => {
    const group = await newGroup('Team Bulk');
    const dave = await createUser(t);
    const res = await req(owner, 'POST', `/api/v2.1/groups/${group.id}/members/bulk/`, { emails: `${bob.email},nobody@example.com,${owner.email},${carol.email},${dave.email}` });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.success.map((m: { email: string }) => m.email)).toEqual([bob.virtualId, carol.virtualId]);
    expect(body.failed).toEqual([
      { email: 'nobody@example.com', error_msg: 'User nobody@example.com not found.' },
      { email: owner.email, error_msg: `User ${owner.email} is already a group member.` },
      { email: dave.email, error_msg: 'The group cannot have more than 3 members.' },
    ]);
  });

  it('renames (admins), transfers (owner) and refuses a name the caller already has', async () => {
    const group = await newGroup('Team C');
    await newGroup('Team C2');
    await req(owner, 'POST', `/api/v2.1/groups/${group.id}/members/`, { email: bob.email });
    expect((await req(bob, 'PUT', `/api/v2.1/groups/${group.id}/`, { name: 'x' })).statusCode).toBe(403);
    expect((await req(owner, 'PUT', `/api/v2.1/groups/${group.id}/`, { name: 'Team C2' })).json()).toEqual({ error_msg: 'There is already a group with that name.' });
    const renamed = await req(owner, 'PUT', `/api/v2.1/groups/${group.id}/`, { name: 'Team C renamed' });
    expect(renamed.json()).toMatchObject({ name: 'Team C renamed' });
    const transferred = await req(owner, 'PUT', `/api/v2.1/groups/${group.id}/`, { owner: bob.email });
    expect(transferred.statusCode, transferred.body).toBe(200);
    expect(transferred.json()).toMatchObject({ owner: bob.virtualId });
    expect(transferred.json().admins).toContain(bob.virtualId);
    // The old owner is an admin now: may rename, may not transfer or delete.
    expect((await req(owner, 'PUT', `/api/v2.1/groups/${group.id}/`, { owner: owner.email })).statusCode).toBe(403);
    expect((await req(owner, 'DELETE', `/api/v2.1/groups/${group.id}/`)).statusCode).toBe(403);
    expect((await req(bob, 'PUT', `/api/v2.1/groups/${group.id}/`, { owner: bob.email })).json()).toEqual({ error_msg: `User ${bob.virtualId} is already group owner.` });
  });

  it('refuses to delete a group holding bases, unless delete_bases=true; deleting removes its workspace', async () => {
    const group = await newGroup('Team D');
    const ws = (await req(owner, 'GET', '/api/v2.1/workspaces/')).json().workspace_list.find((w: { group_id?: number }) => w.group_id === group.id);
    const created = await req(owner, 'POST', '/api/v2.1/dtables/', { name: 'group base', workspace_id: ws.id });
    expect(created.statusCode, created.body).toBe(201);
    const refused = await req(owner, 'DELETE', `/api/v2.1/groups/${group.id}/`);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ error_msg: 'Cannot delete group with bases' });
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group.id}/`)).statusCode).toBe(200);
    expect((await req(owner, 'DELETE', `/api/v2.1/groups/${group.id}/?delete_bases=true`)).statusCode).toBe(200);
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group.id}/`)).statusCode).toBe(404);
    expect((await req(owner, 'GET', basePath({ workspaceId: ws.id, name: 'group base' }, 'access-token/'))).statusCode).toBe(404);
    expect(await t.container.db.selectFrom('workspaces').select('id').where('group_id', '=', group.id).execute()).toEqual([]);
  });

  it('answers bad input with 4xx and changes nothing', async () => {
    const before = await groupRows();
    for (const name of [undefined, '', '   ', 'a/b', 'x'.repeat(256), 42, ['a']]) {
      const res = await req(owner, 'POST', '/api/v2.1/groups/', { name });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error_msg: 'name invalid.' });
    }
    expect(await groupRows()).toBe(before);
    const group = await newGroup('Team E');
    const after = await groupRows();
    for (const id of ['abc', '0', '-1', '99999999999999999999']) expect((await req(owner, 'GET', `/api/v2.1/groups/${id}/`)).statusCode).toBe(404);
    expect((await req(owner, 'POST', `/api/v2.1/groups/${group.id}/members/`, {})).statusCode).toBe(400);
    expect((await req(owner, 'POST', `/api/v2.1/groups/${group.id}/members/`, { email: 'ghost@example.com' })).statusCode).toBe(404);
    expect((await req(owner, 'POST', `/api/v2.1/groups/${group.id}/members/bulk/`, { emails: '' })).statusCode).toBe(400);
    expect((await req(owner, 'PUT', `/api/v2.1/groups/${group.id}/members/${owner.email}/`, { is_admin: 'maybe' })).statusCode).toBe(400);
    expect((await req(owner, 'PUT', `/api/v2.1/groups/${group.id}/members/${owner.email}/`, { is_admin: 'false' })).statusCode).toBe(400);
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group.id}/search-member/`)).statusCode).toBe(400);
    expect((await req(owner, 'PUT', `/api/v2.1/groups/${group.id}/`, {})).statusCode).toBe(400);
    expect((await req(owner, 'DELETE', `/api/v2.1/groups/${group.id}/members/ghost@example.com/`)).statusCode).toBe(404);
    expect(await groupRows()).toBe(after);
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group.id}/members/`)).json()).toHaveLength(1);
  });

  it('system admin: lists, searches, creates, transfers, manages members and deletes groups; others get 403', async () => {
    const created = await req(admin, 'POST', '/api/v2.1/admin/groups/', { group_name: 'Admin made', group_owner: carol.email });
    expect(created.statusCode, created.body).toBe(200);
    const group = created.json();
    expect(group).toEqual({
      id: expect.any(Number),
      name: 'Admin made',
      owner: carol.virtualId,
      owner_name: 'Carol',
      created_at: expect.stringMatching(ISO),
      quota: -1,
      parent_group_id: 0,
      size: 0,
    });
    const list = await req(admin, 'GET', '/api/v2.1/admin/groups/?page=1&per_page=100');
    expect(list.json().page_info).toEqual({ has_next_page: false, current_page: 1 });
    expect(list.json().groups).toContainEqual(group);
    expect((await req(admin, 'GET', '/api/v2.1/admin/groups/?name=admin%20MADE')).json().groups.map((g: { id: number }) => g.id)).toEqual([group.id]);
    expect((await req(admin, 'GET', '/api/v2.1/admin/groups/?name=%25')).json().groups).toEqual([]); // LIKE wildcards are literal

    const added = await req(admin, 'POST', `/api/v2.1/admin/groups/${group.id}/members/`, { email: [bob.email, 'ghost@example.com'] });
    expect(added.json().success.map((m: { email: string }) => m.email)).toEqual([bob.virtualId]);
    expect(added.json().failed).toHaveLength(1);
    expect((await req(admin, 'PUT', `/api/v2.1/admin/groups/${group.id}/members/${bob.email}/`, { is_admin: 'true' })).json()).toMatchObject({ role: 'Admin' });
    const members = await req(admin, 'GET', `/api/v2.1/admin/groups/${group.id}/members/`);
    expect(members.json()).toMatchObject({ group_name: 'Admin made', total_count: 2 });
    const transferred = await req(admin, 'PUT', `/api/v2.1/admin/groups/${group.id}/`, { new_owner: bob.email });
    expect(transferred.json()).toMatchObject({ owner: bob.virtualId });
    expect((await req(admin, 'DELETE', `/api/v2.1/admin/groups/${group.id}/members/${carol.email}/`)).statusCode).toBe(200);

    for (const [method, url] of [
      ['GET', '/api/v2.1/admin/groups/'],
      ['POST', '/api/v2.1/admin/groups/'],
      ['DELETE', `/api/v2.1/admin/groups/${group.id}/`],
    ] as const) {
      expect((await req(owner, method, url, { group_name: 'x', group_owner: owner.email })).statusCode).toBe(403);
    }
    expect((await req(admin, 'POST', '/api/v2.1/admin/groups/', { group_name: 'x', group_owner: 'ghost@example.com' })).statusCode).toBe(404);
    expect((await req(admin, 'DELETE', `/api/v2.1/admin/groups/${group.id}/`)).statusCode).toBe(200);
    expect((await req(admin, 'DELETE', `/api/v2.1/admin/groups/${group.id}/`)).statusCode).toBe(404);
  });
});
