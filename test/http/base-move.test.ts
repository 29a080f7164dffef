import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { twoInstancesOverRedis, type Instance } from './rate-limit.helpers.js';

// Moving bases between workspaces: a basegate extension (docs/permissions.md, docs/compatibility.md).

interface Team {
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  groupId: number;
  workspaceId: number;
}

async function team(t: TestApp, owner?: TestUser): Promise<Team> {
  const o = owner ?? (await createUser(t));
  const [admin, member] = [await createUser(t), await createUser(t)];
  const group = (await t.request({ method: 'POST', url: '/api/v2.1/groups/', token: o.token, payload: { name: `team ${Math.random()}` } })).json();
  for (const u of [admin, member]) {
    const added = await t.request({ method: 'POST', url: `/api/v2.1/groups/${group.id}/members/`, token: o.token, payload: { email: u.email } });
    expect(added.statusCode, added.body).toBe(201);
  }
  const made = await t.request({ method: 'PUT', url: `/api/v2.1/groups/${group.id}/members/${admin.email}/`, token: o.token, payload: { is_admin: 'true' } });
  expect(made.statusCode, made.body).toBe(200);
  const ws = (await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: o.token })).json().workspace_list.find((w: { group_id?: number }) => w.group_id === group.id);
  return { owner: o, admin, member, groupId: group.id, workspaceId: ws.id };
}

async function baseIn(t: TestApp, user: TestUser, workspaceId: number, name = `b-${Math.random().toString(36).slice(2, 8)}`): Promise<TestBase> {
  const res = await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: user.token, payload: { name, workspace_id: workspaceId } });
  expect(res.statusCode, res.body).toBe(201);
  const table = res.json().table;
  return { id: table.id, uuid: table.uuid, name: table.name, workspaceId: table.workspace_id };
}

const move = (t: TestApp, user: TestUser, base: TestBase, payload: Record<string, unknown>) =>
  t.request({ method: 'PUT', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/`, token: user.token, payload: { name: base.name, ...payload } });

const rowsOn = (app: Pick<Instance['app'], 'inject'>, base: TestBase, token: string) =>
  app.inject({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/?table_name=Table1`, headers: { authorization: `Token ${token}` } });

/** Where the base's row is now (trashed or not), straight from the database. */
async function workspaceOf(t: TestApp, baseId: number): Promise<number | undefined> {
  const row = await t.container.db.selectFrom('bases').select('workspace_id').where('id', '=', baseId).executeTakeFirst();
  return row === undefined ? undefined : Number(row.workspace_id);
}

async function personalWorkspace(t: TestApp, user: TestUser): Promise<number> {
  return (await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: user.token })).json().workspace_list.find((w: { type: string }) => w.type === 'personal').id;
}

describe.each(DIALECTS)('moving bases between workspaces (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('moves a personal base into a group workspace and back, keeping its uuid, rows and shares', async () => {
    const g = await team(t);
    const base = await createBase(t, g.owner, undefined, { blankRows: true });
    const friend = await createUser(t);
    const shared = await t.request({ method: 'POST', url: basePath(base, 'share/'), token: g.owner.token, payload: { email: friend.email, permission: 'r' } });
    expect(shared.statusCode, shared.body).toBe(201);
    const rowsBefore = (await rowsOn(t.app, base, await baseToken(t, g.owner, base))).json().rows.length;
    expect(rowsBefore).toBeGreaterThan(0);

    const res = await move(t, g.owner, base, { to_workspace_id: g.workspaceId });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().table).toMatchObject({ uuid: base.uuid, name: base.name, workspace_id: g.workspaceId });
    const moved = { ...base, workspaceId: g.workspaceId };
    expect(await workspaceOf(t, base.id)).toBe(g.workspaceId);
    // The group's plain member reaches it now; the friend's share and the rows stayed.
    expect((await rowsOn(t.app, moved, await baseToken(t, g.member, moved))).json().rows.length).toBe(rowsBefore);
    expect((await t.request({ method: 'GET', url: basePath(moved, 'access-token/'), token: friend.token })).statusCode).toBe(200);

    const back = await move(t, g.owner, moved, { to_workspace_id: base.workspaceId, new_name: 'came back' });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json().table).toMatchObject({ uuid: base.uuid, name: 'came back', workspace_id: base.workspaceId });
    expect(await workspaceOf(t, base.id)).toBe(base.workspaceId);
  });

  it('a group admin may move a group base; a plain member is refused and nothing changes', async () => {
    const g = await team(t);
    const base = await baseIn(t, g.owner, g.workspaceId);
    const refused = await move(t, g.member, base, { to_workspace_id: await personalWorkspace(t, g.member) });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ error_msg: 'Permission denied.' });
    expect(await workspaceOf(t, base.id)).toBe(g.workspaceId);
    const mine = await personalWorkspace(t, g.admin);
    // As the original's clients send it: a form body.
    const allowed = await t.request({
      method: 'PUT',
      url: `/api/v2.1/workspace/${g.workspaceId}/dtable/`,
      token: g.admin.token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ name: base.name, to_workspace_id: String(mine) }).toString(),
    });
    expect(allowed.statusCode, allowed.body).toBe(200);
    expect(await workspaceOf(t, base.id)).toBe(mine);
  });

  it('refuses a target the user cannot write (403) and an unknown one (404)', async () => {
    const g = await team(t);
    const stranger = await createUser(t);
    const base = await createBase(t, stranger);
    const intoGroup = await move(t, stranger, base, { to_workspace_id: g.workspaceId });
    expect(intoGroup.statusCode).toBe(403);
    const intoOthers = await move(t, stranger, base, { to_workspace_id: await personalWorkspace(t, g.owner) });
    expect(intoOthers.statusCode).toBe(403);
    const unknown = await move(t, stranger, base, { to_workspace_id: 99999999 });
    expect(unknown.statusCode).toBe(404);
    expect(await workspaceOf(t, base.id)).toBe(base.workspaceId);
  });

  it('a name taken in the target is a 409 and nothing changes (rename included)', async () => {
    const g = await team(t);
    const base = await createBase(t, g.owner);
    await baseIn(t, g.admin, g.workspaceId, 'taken');
    const res = await move(t, g.owner, base, { to_workspace_id: g.workspaceId, new_name: 'taken' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error_msg).toBe('Table taken already exists.');
    const row = await t.container.db.selectFrom('bases').select(['workspace_id', 'name']).where('id', '=', base.id).executeTakeFirstOrThrow();
    expect({ ws: Number(row.workspace_id), name: row.name }).toEqual({ ws: base.workspaceId, name: base.name });
  });

  it('moving into the same workspace answers the base unchanged', async () => {
    const owner = await createUser(t);
    const base = await createBase(t, owner);
    const res = await move(t, owner, base, { to_workspace_id: base.workspaceId });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().table).toMatchObject({ uuid: base.uuid, name: base.name, workspace_id: base.workspaceId });
  });

  it('the old group’s members lose access at once, the new workspace’s members gain it', async () => {
    const from = await team(t);
    const target = await team(t, from.owner);
    const base = await baseIn(t, from.owner, from.workspaceId);
    const oldMemberToken = await baseToken(t, from.member, base);
    expect((await rowsOn(t.app, base, oldMemberToken)).statusCode).toBe(200);
    const res = await move(t, from.owner, base, { to_workspace_id: target.workspaceId });
    expect(res.statusCode, res.body).toBe(200);
    expect([403, 404]).toContain((await rowsOn(t.app, base, oldMemberToken)).statusCode);
    const moved = { ...base, workspaceId: target.workspaceId };
    expect((await t.request({ method: 'GET', url: basePath(moved, 'access-token/'), token: from.member.token })).statusCode).toBe(403);
    expect((await rowsOn(t.app, moved, await baseToken(t, target.member, moved))).statusCode).toBe(200);
    // The owner, in both groups, keeps a working token.
    expect((await rowsOn(t.app, moved, await baseToken(t, from.owner, moved))).statusCode).toBe(200);
  });

  it('bad input is a 400 that changes nothing', async () => {
    const owner = await createUser(t);
    const base = await createBase(t, owner);
    for (const payload of [{ to_workspace_id: 'abc' }, { to_workspace_id: -3 }, { to_workspace_id: '1.5' }, {}, { new_name: 'a/b', to_workspace_id: base.workspaceId }]) {
      const res = await move(t, owner, base, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(typeof res.json().error_msg).toBe('string');
    }
    const noName = await t.request({ method: 'PUT', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/`, token: owner.token, payload: { to_workspace_id: base.workspaceId } });
    expect(noName.statusCode).toBe(400);
    const row = await t.container.db.selectFrom('bases').select(['workspace_id', 'name']).where('id', '=', base.id).executeTakeFirstOrThrow();
    expect({ ws: Number(row.workspace_id), name: row.name }).toEqual({ ws: base.workspaceId, name: base.name });
  });

  it('a move racing the deletion of its group with its bases: never a 500, never a base moved and then gone', async () => {
    for (let round = 0; round < 4; round++) {
      const g = await team(t);
      const base = await baseIn(t, g.owner, g.workspaceId);
      const target = await personalWorkspace(t, g.owner);
      const [moved, deleted] = await Promise.all([
        move(t, g.owner, base, { to_workspace_id: target }),
        t.request({ method: 'DELETE', url: `/api/v2.1/groups/${g.groupId}/?delete_bases=true`, token: g.owner.token }),
      ]);
      expect(deleted.statusCode, deleted.body).toBe(200);
      expect([200, 404], moved.body).toContain(moved.statusCode);
      expect(await workspaceOf(t, base.id)).toBe(moved.statusCode === 200 ? target : undefined);
    }
  });

  describe('deleting a group with move_bases_to', () => {
    it('moves all its bases, the trashed one too, and deletes the group; the members lose access', async () => {
      const g = await team(t);
      const live = await baseIn(t, g.owner, g.workspaceId);
      const trashed = await baseIn(t, g.admin, g.workspaceId);
      expect((await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${g.workspaceId}/dtable/`, token: g.owner.token, payload: { name: trashed.name } })).statusCode).toBe(200);
      const memberToken = await baseToken(t, g.member, live);
      const target = await personalWorkspace(t, g.owner);
      const res = await t.request({ method: 'DELETE', url: `/api/v2.1/groups/${g.groupId}/?move_bases_to=${target}`, token: g.owner.token });
      expect(res.statusCode, res.body).toBe(200);
      expect((await t.request({ method: 'GET', url: `/api/v2.1/groups/${g.groupId}/`, token: g.owner.token })).statusCode).toBe(404);
      expect(await workspaceOf(t, live.id)).toBe(target);
      expect(await workspaceOf(t, trashed.id)).toBe(target);
      const moved = { ...live, workspaceId: target };
      expect([403, 404]).toContain((await rowsOn(t.app, moved, memberToken)).statusCode);
      expect((await rowsOn(t.app, moved, await baseToken(t, g.owner, moved))).statusCode).toBe(200);
      // The trashed one is restorable from its new workspace's owner's trash.
      const trash = await t.request({ method: 'GET', url: '/api/v2.1/trash-dtables/', token: g.owner.token });
      expect(trash.statusCode, trash.body).toBe(200);
      expect(JSON.stringify(trash.json())).toContain(trashed.name);
    });

    it('a name clash refuses the whole call with 400 naming the base; nothing changes', async () => {
      const g = await team(t);
      const [a, b] = [await baseIn(t, g.owner, g.workspaceId, 'alpha'), await baseIn(t, g.owner, g.workspaceId, 'beta')];
      const ownerBase = await createBase(t, g.owner, 'beta');
      const res = await t.request({ method: 'DELETE', url: `/api/v2.1/groups/${g.groupId}/`, token: g.owner.token, payload: { move_bases_to: ownerBase.workspaceId } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error_msg).toContain('beta');
      expect((await t.request({ method: 'GET', url: `/api/v2.1/groups/${g.groupId}/`, token: g.owner.token })).statusCode).toBe(200);
      expect([await workspaceOf(t, a.id), await workspaceOf(t, b.id)]).toEqual([g.workspaceId, g.workspaceId]);
      expect((await rowsOn(t.app, a, await baseToken(t, g.member, a))).statusCode).toBe(200);
    });

    it('refuses bad and forbidden targets without changing anything', async () => {
      const g = await team(t);
      const base = await baseIn(t, g.owner, g.workspaceId);
      const other = await createUser(t);
      const cases: Array<[string, number]> = [
        ['move_bases_to=abc', 400],
        ['move_bases_to=1&delete_bases=true', 400],
        [`move_bases_to=${g.workspaceId}`, 400],
        [`move_bases_to=${await personalWorkspace(t, other)}`, 403],
        ['move_bases_to=99999999', 404],
      ];
      for (const [query, status] of cases) {
        const res = await t.request({ method: 'DELETE', url: `/api/v2.1/groups/${g.groupId}/?${query}`, token: g.owner.token });
        expect(res.statusCode, query).toBe(status);
      }
      // Only the owner deletes a group, moving or not.
      const byAdmin = await t.request({ method: 'DELETE', url: `/api/v2.1/groups/${g.groupId}/?move_bases_to=${await personalWorkspace(t, g.admin)}`, token: g.admin.token });
      expect(byAdmin.statusCode).toBe(403);
      expect(await workspaceOf(t, base.id)).toBe(g.workspaceId);
      expect((await t.request({ method: 'GET', url: `/api/v2.1/groups/${g.groupId}/`, token: g.owner.token })).statusCode).toBe(200);
    });
  });
});

describe.each(DIALECTS)('a move revokes the old group’s access on another instance (%s)', (dialect) => {
  const pair = twoInstancesOverRedis(dialect);

  it('the other instance refuses the old member’s Base-Token once the message arrives (its clock never moves)', async () => {
    const { t, other } = pair;
    const g = await team(t);
    const base = await baseIn(t, g.owner, g.workspaceId);
    const token = await baseToken(t, g.member, base);
    expect((await rowsOn(other.app, base, token)).statusCode).toBe(200);
    const res = await move(t, g.owner, base, { to_workspace_id: await personalWorkspace(t, g.owner) });
    expect(res.statusCode, res.body).toBe(200);
    await vi.waitFor(async () => expect([403, 404]).toContain((await rowsOn(other.app, base, token)).statusCode), { timeout: 5000, interval: 10 });
  });
});
