import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CACHE_TTL_MS } from '../../src/modules/tokens/index.js';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase } from '../helpers/index.js';
import { secondInstance, twoInstancesOverRedis, type Instance } from './rate-limit.helpers.js';

/** A group with `member` in it, a base in its workspace and a base shared with it; the member's Base-Tokens on both. */
async function groupWithMember(t: TestApp) {
  const [owner, member] = [await createUser(t), await createUser(t)];
  const group = (await t.request({ method: 'POST', url: '/api/v2.1/groups/', token: owner.token, payload: { name: 'Revoked team' } })).json();
  await t.request({ method: 'POST', url: `/api/v2.1/groups/${group.id}/members/`, token: owner.token, payload: { email: member.email } });
  const ws = (await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: owner.token })).json().workspace_list.find((w: { group_id?: number }) => w.group_id === group.id);
  const created = (await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: owner.token, payload: { name: 'in group', workspace_id: ws.id } })).json().table;
  const inGroup: TestBase = { id: created.id, uuid: created.uuid, name: created.name, workspaceId: created.workspace_id };
  const shared = await createBase(t, owner);
  const share = await t.request({ method: 'POST', url: basePath(shared, 'group-shares/'), token: owner.token, payload: { group_id: group.id, permission: 'r' } });
  expect(share.statusCode, share.body).toBe(200);
  return { owner, member, groupId: group.id as number, inGroup, shared, tokens: [await baseToken(t, member, inGroup), await baseToken(t, member, shared)] };
}

const rowsOn = (app: Pick<Instance['app'], 'inject'>, base: TestBase, token: string) =>
  app.inject({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/?table_name=Table1`, headers: { authorization: `Token ${token}` } });

describe.each(DIALECTS)('removal from a group revokes access on another instance (%s)', (dialect) => {
  describe('through Redis: at once', () => {
    const pair = twoInstancesOverRedis(dialect);

    it('the other instance refuses the removed member’s Base-Tokens once the message arrives (its clock never moves)', async () => {
      const { t, other } = pair;
      const { owner, member, groupId, inGroup, shared, tokens } = await groupWithMember(t);
      const [a, b] = tokens as [string, string];
      expect((await rowsOn(other.app, inGroup, a)).statusCode).toBe(200);
      expect((await rowsOn(other.app, shared, b)).statusCode).toBe(200);
      const removed = await t.request({ method: 'DELETE', url: `/api/v2.1/groups/${groupId}/members/${member.email}/`, token: owner.token });
      expect(removed.statusCode).toBe(200);
      await vi.waitFor(async () => expect((await rowsOn(other.app, inGroup, a)).statusCode).toBe(403), { timeout: 5000, interval: 10 });
      await vi.waitFor(async () => expect((await rowsOn(other.app, shared, b)).statusCode).toBe(403), { timeout: 5000, interval: 10 });
      // The owner's own token there is untouched.
      expect((await rowsOn(other.app, inGroup, await baseToken(t, owner, inGroup))).statusCode).toBe(200);
    });

    it('deleting a group with its bases makes their Base-Tokens fail with 404 on the other instance', async () => {
      const { t, other } = pair;
      const { owner, groupId, inGroup } = await groupWithMember(t);
      const ownerToken = await baseToken(t, owner, inGroup);
      expect((await rowsOn(other.app, inGroup, ownerToken)).statusCode).toBe(200);
      const del = await t.request({ method: 'DELETE', url: `/api/v2.1/groups/${groupId}/?delete_bases=true`, token: owner.token });
      expect(del.statusCode, del.body).toBe(200);
      await vi.waitFor(async () => expect((await rowsOn(other.app, inGroup, ownerToken)).statusCode).toBe(404), { timeout: 5000, interval: 10 });
    });
  });

  describe('without Redis: within the cache TTL', () => {
    let t: TestApp;
    let other: Instance;
    beforeAll(async () => {
      t = await createTestApp(dialect);
      other = await secondInstance(t);
    });
    afterAll(async () => {
      await other?.close();
      await t?.close();
    });

    it('at once here; on the other instance once its cached version expires', async () => {
      const { owner, member, groupId, inGroup, tokens } = await groupWithMember(t);
      const token = tokens[0]!;
      expect((await rowsOn(other.app, inGroup, token)).statusCode).toBe(200);
      await t.request({ method: 'DELETE', url: `/api/v2.1/groups/${groupId}/members/${member.email}/`, token: owner.token });
      expect((await rowsOn(t.app, inGroup, token)).statusCode).toBe(403);
      other.clock.advance(CACHE_TTL_MS);
      expect((await rowsOn(other.app, inGroup, token)).statusCode).toBe(403);
    });
  });
});
