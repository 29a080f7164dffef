import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
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

  /** Resolves once `check` holds, polling (at most `ms`). */
  async function until(check: () => Promise<boolean>, what: string, ms = 10_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('sees a base added to the group while it runs: the check is in the deletion\'s transaction, which waits for the base and is refused', async () => {
    const owner = await createUser(t);
    const group = await newGroup(owner, 'Racing');
    const workspace = await workspaceOf(owner, group);
    const db = t.container.db;
    // A base being created in the group's workspace: inserted, not yet committed, while the deletion starts.
    let release!: () => void;
    let inserted!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ready = new Promise<void>((resolve) => (inserted = resolve));
    const now = Date.now();
    const creating = db.transaction().execute(async (trx) => {
      await trx.insertInto('bases').values({ uuid: 'racing-base-uuid', workspace_id: workspace, name: 'raced', creator_id: owner.id, modifier_id: owner.id, created_at: now, updated_at: now }).execute();
      inserted();
      await held;
    });
    await ready;
    const deleting = deleteUser(owner);
    if (dialect === 'postgres') {
      // The deletion waits on the base's transaction (a lock not granted) before it is let go.
      await until(async () => Number((await sql<{ n: string }>`select count(*) as n from pg_locks where not granted`.execute(db)).rows[0]!.n) > 0, 'the deletion to wait');
    } else {
      await new Promise((resolve) => setTimeout(resolve, 100)); // SQLite: the deletion waits for the one connection
    }
    release();
    await creating;
    const answer = await deleting;
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json().error_msg).toContain('(Racing)');
    expect(await db.selectFrom('bases').select('id').where('uuid', '=', 'racing-base-uuid').executeTakeFirst()).toBeDefined();
    expect((await req(owner, 'GET', `/api/v2.1/groups/${group}/`)).statusCode).toBe(200);
  });

  it('races base creation and copying through the API against the deletion: never a base created and then gone, never a 500', async () => {
    for (let round = 0; round < 4; round++) {
      const owner = await createUser(t);
      const group = await newGroup(owner, `Race ${round}`);
      const workspace = await workspaceOf(owner, group);
      const source = await req(owner, 'POST', '/api/v2.1/dtables/', { name: 'source' });
      expect(source.statusCode, source.body).toBe(201);
      const creations = Array.from({ length: 3 }, (_, i) => req(owner, 'POST', '/api/v2.1/dtables/', { name: `b${i}`, workspace_id: workspace }));
      const copy = req(owner, 'POST', '/api/v2.1/dtable-copy/', { src_workspace_id: source.json().table.workspace_id, dst_workspace_id: workspace, name: 'source' });
      const [deleted, copied, ...created] = await Promise.all([deleteUser(owner), copy, ...creations]);
      for (const [i, answer] of [deleted!, copied!, ...created].entries()) expect(answer.statusCode, `${i} ${answer.body}`).toBeLessThan(500);
      const made = [...created.filter((answer) => answer.statusCode === 201), ...(copied!.statusCode === 200 ? [copied!] : [])];
      const kept = await t.container.db.selectFrom('bases').select('id').where('workspace_id', '=', workspace).execute();
      if (deleted!.statusCode === 200) {
        expect(made).toEqual([]); // the group went with its owner: no base was created in it
        expect(kept).toEqual([]);
      } else {
        expect(deleted!.statusCode).toBe(400);
        expect(kept.length).toBe(made.length); // every base created is still there
      }
    }
  });
});
