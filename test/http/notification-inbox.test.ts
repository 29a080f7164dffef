import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { notifyUser } from '../../src/modules/notifications/index.js';

describe.each(DIALECTS)('notifications inbox (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let one: TestBase;
  let two: TestBase;

  const notify = (user: TestUser, base: TestBase | null, msg: string) =>
    t.container.db.transaction().execute((trx) =>
      t.container.notifications.notifyUser(trx, {
        userId: user.id,
        msgType: 'notification_rules',
        detail: { msg },
        baseId: base?.id ?? null,
        dtableUuid: base?.uuid ?? null,
      }),
    );

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    one = await createBase(t, alice);
    two = await createBase(t, alice);
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    await t.container.db.deleteFrom('notifications').execute();
    for (const [i, base] of [one, one, two, null].entries()) {
      t.clock.advance(1000);
      await notify(alice, base, `m${i}`);
    }
    await notify(bob, one, 'for bob');
  });

  const list = async (user: TestUser, query = '') => {
    const res = await t.request({ method: 'GET', url: `/api/v2.1/notifications/${query}`, token: user.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ notification_list: Array<Record<string, unknown>>; count: number; unseen_count: number }>();
  };

  describe('/api/v2.1/notifications/', () => {
    it('lists the user’s notifications newest first with count and unseen_count', async () => {
      const body = await list(alice);
      expect(body.count).toBe(4);
      expect(body.unseen_count).toBe(4);
      expect(body.notification_list.map((n) => (n.detail as { msg: string }).msg)).toEqual(['m3', 'm2', 'm1', 'm0']);
      expect(body.notification_list[3]).toEqual({
        id: expect.any(Number),
        type: 'notification_rules',
        msg_type: 'notification_rules',
        dtable_uuid: one.uuid,
        detail: { msg: 'm0' },
        time: expect.stringMatching(/^2026-01-05T10:\d\d:\d\d\+00:00$/),
        seen: false,
      });
      expect(body.notification_list[0]!.dtable_uuid).toBe('');
    });

    it('pages with page and per_page; bad numbers fall back to 1 and 25; per_page is capped at 100', async () => {
      expect((await list(alice, '?page=2&per_page=3')).notification_list.map((n) => (n.detail as { msg: string }).msg)).toEqual(['m0']);
      expect((await list(alice, '?page=x&per_page=1')).notification_list).toHaveLength(4);
      expect((await list(alice, '?page=0&per_page=-5')).notification_list).toHaveLength(1);
      for (let i = 0; i < 101; i++) await notify(alice, null, `bulk ${i}`);
      expect((await list(alice, '?per_page=1000')).notification_list).toHaveLength(100);
      expect((await list(alice)).count).toBe(105);
    });

    it('PUT marks every notification seen (notice_type is accepted and ignored)', async () => {
      const res = await t.request({ method: 'PUT', url: '/api/v2.1/notifications/', token: alice.token, payload: { notice_type: 'general' } });
      expect(res.json()).toEqual({ success: true });
      const body = await list(alice);
      expect(body.unseen_count).toBe(0);
      expect(body.notification_list.every((n) => n.seen === true)).toBe(true);
      expect((await list(bob)).unseen_count).toBe(1);
    });

    it('PUT /api/v2.1/notification/ marks one seen, with the contract errors', async () => {
      const [newest] = (await list(alice)).notification_list;
      const res = await t.request({
        method: 'PUT',
        url: '/api/v2.1/notification/',
        token: alice.token,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `notice_id=${String(newest!.id)}`,
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true });
      const after = await list(alice);
      expect(after.unseen_count).toBe(3);
      expect(after.notification_list[0]!.seen).toBe(true);

      for (const bad of [undefined, 'abc', '0', '-1']) {
        const r = await t.request({ method: 'PUT', url: '/api/v2.1/notification/', token: alice.token, payload: bad === undefined ? {} : { notice_id: bad } });
        expect(r.statusCode).toBe(400);
        expect(r.json()).toEqual({ error_msg: 'notice_id invalid.' });
      }
      const missing = await t.request({ method: 'PUT', url: '/api/v2.1/notification/', token: alice.token, payload: { notice_id: 999999 } });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ error_msg: 'Notification 999999 not found.' });
      const [bobs] = (await list(bob)).notification_list;
      const foreign = await t.request({ method: 'PUT', url: '/api/v2.1/notification/', token: alice.token, payload: { notice_id: bobs!.id } });
      expect(foreign.statusCode).toBe(403);
      expect((await list(bob)).unseen_count).toBe(1);
    });

    it('DELETE removes all of the user’s notifications, seen or not, and only theirs', async () => {
      await t.request({ method: 'PUT', url: '/api/v2.1/notifications/', token: alice.token, payload: {} });
      await notify(alice, one, 'unseen');
      const res = await t.request({ method: 'DELETE', url: '/api/v2.1/notifications/', token: alice.token });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true });
      expect(await list(alice)).toEqual({ notification_list: [], count: 0, unseen_count: 0 });
      expect((await list(bob)).count).toBe(1);
      const again = await t.request({ method: 'DELETE', url: '/api/v2.1/notifications/', token: alice.token });
      expect(again.json()).toEqual({ success: true });
    });

    it('needs an Account-Token', async () => {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const res = await t.request({ method, url: '/api/v2.1/notifications/' });
        expect(res.statusCode).toBe(403);
      }
      expect((await t.request({ method: 'PUT', url: '/api/v2.1/notification/', token: 'f'.repeat(40), payload: { notice_id: 1 } })).statusCode).toBe(401);
    });
  });

  describe('/api-gateway/api/v2/dtables/{base_uuid}/notifications/', () => {
    const path = (base: TestBase, suffix = '') => `/api-gateway/api/v2/dtables/${base.uuid}/notifications/${suffix}`;

    it('lists the token user’s notifications of this base in the contract shape', async () => {
      const token = await baseToken(t, alice, one);
      const res = await t.request({ method: 'GET', url: path(one), token });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json<{ notification_list: Array<Record<string, unknown>> }>();
      expect(body.notification_list.map((n) => (n.detail as { msg: string }).msg)).toEqual(['m1', 'm0']);
      expect(body.notification_list[1]).toEqual({
        id: expect.any(Number),
        username: alice.virtualId,
        dtable_uuid: one.uuid,
        msg_type: 'notification_rules',
        created_at: expect.stringMatching(/^2026-01-05T10:\d\d:\d\d\+00:00$/),
        detail: { msg: 'm0' },
        seen: 0,
      });
      const paged = await t.request({ method: 'GET', url: `${path(one)}?page=2&per_page=1`, token });
      expect(paged.json<{ notification_list: Array<{ detail: { msg: string } }> }>().notification_list.map((n) => n.detail.msg)).toEqual(['m0']);
    });

    it('PUT seen=true|false changes all of this base only; other values are refused', async () => {
      const token = await baseToken(t, alice, one);
      const res = await t.request({ method: 'PUT', url: path(one), token, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'seen=true' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true });
      expect((await list(alice)).unseen_count).toBe(2);
      await t.request({ method: 'PUT', url: path(one), token, payload: { seen: 'false' } });
      expect((await list(alice)).unseen_count).toBe(4);
      for (const seen of [undefined, 'True', 'yes', 1]) {
        const bad = await t.request({ method: 'PUT', url: path(one), token, payload: seen === undefined ? {} : { seen } });
        expect(bad.statusCode).toBe(400);
        expect(bad.json()).toEqual({ error_msg: 'seen invalid.' });
      }
    });

    it('PUT …/{id}/ changes one notification of this base and this user', async () => {
      const token = await baseToken(t, alice, one);
      const [m1, m0] = (await t.request({ method: 'GET', url: path(one), token })).json<{ notification_list: Array<{ id: number }> }>().notification_list;
      const res = await t.request({ method: 'PUT', url: path(one, `${m0!.id}/`), token, payload: { seen: 'true' } });
      expect(res.statusCode, res.body).toBe(200);
      const after = (await t.request({ method: 'GET', url: path(one), token })).json<{ notification_list: Array<{ id: number; seen: number }> }>();
      expect(after.notification_list.map((n) => [n.id, n.seen])).toEqual([[m1!.id, 0], [m0!.id, 1]]);

      const otherBase = (await list(alice)).notification_list.find((n) => n.dtable_uuid === two.uuid)!;
      const bobsNotice = (await list(bob)).notification_list[0]!;
      for (const id of [String(otherBase.id), String(bobsNotice.id), '999999', 'abc']) {
        const r = await t.request({ method: 'PUT', url: path(one, `${id}/`), token, payload: { seen: 'true' } });
        expect(r.statusCode).toBe(404);
        expect(r.json()).toEqual({ error_msg: `Notification ${id} not found.` });
      }
      const bad = await t.request({ method: 'PUT', url: path(one, `${m1!.id}/`), token, payload: { seen: 'maybe' } });
      expect(bad.statusCode).toBe(400);
    });

    it('DELETE removes this user’s notifications of this base only', async () => {
      const res = await t.request({ method: 'DELETE', url: path(one), token: await baseToken(t, alice, one) });
      expect(res.json()).toEqual({ success: true });
      expect((await list(alice)).notification_list.map((n) => (n.detail as { msg: string }).msg)).toEqual(['m3', 'm2']);
      expect((await list(bob)).count).toBe(1);
    });

    it('a token without a user (API-Token) sees an empty inbox and changes nothing', async () => {
      const created = await t.request({ method: 'POST', url: basePath(one, 'api-tokens/'), token: alice.token, payload: { app_name: `app-${dialect}-${Date.now()}`, permission: 'rw' } });
      expect(created.statusCode, created.body).toBe(201);
      const access = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${created.json<{ api_token: string }>().api_token}` } });
      expect(access.statusCode, access.body).toBe(200);
      const token = access.json<{ access_token: string }>().access_token;
      expect((await t.request({ method: 'GET', url: path(one), token })).json()).toEqual({ notification_list: [] });
      expect((await t.request({ method: 'DELETE', url: path(one), token })).statusCode).toBe(200);
      expect((await t.request({ method: 'PUT', url: path(one, '1/'), token, payload: { seen: 'true' } })).statusCode).toBe(404);
      expect((await list(alice)).count).toBe(4);
    });

    it('needs a Base-Token of this base', async () => {
      expect((await t.request({ method: 'GET', url: path(one) })).statusCode).toBe(403);
      const otherToken = await baseToken(t, alice, two);
      expect((await t.request({ method: 'GET', url: path(one), token: otherToken })).statusCode).toBe(403);
    });
  });

  it('notifyUser finds users by virtual id and reports unknown ones', async () => {
    const ok = await t.container.db.transaction().execute((trx) =>
      notifyUser(trx, { virtualId: bob.virtualId, msgType: 'webhook_disabled', detail: { msg: 'x' }, now: t.clock.now() }),
    );
    expect(ok).toBe(true);
    expect((await list(bob)).notification_list[0]).toMatchObject({ type: 'webhook_disabled', detail: { msg: 'x' } });
    const missing = await notifyUser(t.container.db, { virtualId: 'nobody@auth.local', msgType: 'x', detail: {} });
    expect(missing).toBe(false);
    expect(await notifyUser(t.container.db, { userId: 999999, msgType: 'x', detail: {} })).toBe(false);
  });
});
