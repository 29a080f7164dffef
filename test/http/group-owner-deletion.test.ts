import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Issue 30: deleting a user who owns a group. A group others use (its workspace holds bases, or it has
 * other members) would vanish with its owner by cascade: the deletion is refused, naming the groups,
 * and nothing changes; once the group is transferred (or deleted) the user can be deleted. A group
 * only its owner uses goes with the owner.
 */
describe.each(DIALECTS)('deleting the owner of a group (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;
  const req = (user: TestUser, method: Method, url: string, payload?: object) => t.request({ method, url, token: user.token, ...(payload ? { payload } : {}) });
  const deleteUser = (user: TestUser) => req(admin, 'DELETE', `/api/v2.1/admin/users/${encodeURIComponent(user.email)}/`);
  const newGroup = async (owner: TestUser, name: string) => {
    const res = await req(owner, 'POST', '/api/v2.1/groups/', { name });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  };
  const workspaceOf = async (user: TestUser, groupId: number) =>
    (await req(user, 'GET', '/api/v2.1/workspaces/')).json().workspace_list.find((w: { group_id?: number }) => w.group_id === groupId).id as number;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    admin = await createUser(t, { admin: true });
  });
  afterAll(() => t.close());

  it('is refused while a group of theirs has other members; after a transfer the group stays with its new owner', async () => {
    const owner = await createUser(t);
    const member = await createUser(t);
    const group = await newGroup(owner, 'Crew');
    expect((await req(owner, 'POST', `/api/v2.1/groups/${group}/members/`, { email: member.email })).statusCode).toBe(201);
    const refused = await deleteUser(owner);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error_msg).toBe(`User ${owner.email} owns groups that hold bases or have other members (Crew): transfer them to another owner or delete them first.`);
    // Nothing changed: the user signs in as before, the group is theirs.
    const before = await req(member, 'GET', `/api/v2.1/groups/${group}/`);
    expect(before.statusCode).toBe(200);
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group}/`)).json().owner).toBe(before.json().owner);

    const transfer = await req(admin, 'PUT', `/api/v2.1/admin/groups/${group}/`, { new_owner: member.email });
    expect(transfer.statusCode, transfer.body).toBe(200);
    expect((await deleteUser(owner)).statusCode).toBe(200);
    const after = await req(member, 'GET', `/api/v2.1/groups/${group}/`);
    expect(after.statusCode).toBe(200);
    expect(after.json().owner).toBe(transfer.json().owner);
    expect(after.json().owner).toBe(member.virtualId);
    expect(before.json().owner).toBe(owner.virtualId);
  });

  it('is refused while a group of theirs holds a base, even with no other member; deleting the group first lets it through', async () => {
    const owner = await createUser(t);
    const group = await newGroup(owner, 'Solo with a base');
    const base = await req(owner, 'POST', '/api/v2.1/dtables/', { name: 'kept', workspace_id: await workspaceOf(owner, group) });
    expect(base.statusCode, base.body).toBe(201);
    const refused = await deleteUser(owner);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error_msg).toContain('(Solo with a base)');
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group}/`)).statusCode).toBe(200);
    expect((await req(owner, 'DELETE', `/api/v2.1/groups/${group}/?delete_bases=true`)).statusCode).toBe(200);
    expect((await deleteUser(owner)).statusCode).toBe(200);
  });

  it('names every such group; a group only its owner uses goes with the owner', async () => {
    const owner = await createUser(t);
    const other = await createUser(t);
    const lonely = await newGroup(owner, 'Lonely');
    const shared = await newGroup(owner, 'Shared');
    expect((await req(owner, 'POST', `/api/v2.1/groups/${shared}/members/`, { email: other.email })).statusCode).toBe(201);
    expect((await deleteUser(owner)).json().error_msg).toContain('(Shared)');
    expect((await req(owner, 'DELETE', `/api/v2.1/groups/${shared}/`)).statusCode).toBe(200);
    expect((await deleteUser(owner)).statusCode).toBe(200);
    expect((await req(admin, 'GET', `/api/v2.1/admin/groups/${lonely}/members/`)).statusCode).toBe(404);
  });
});
