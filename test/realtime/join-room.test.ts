import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { client, disconnected, join, joined, listen, settle, waitFor, type LiveClient } from './live.support.js';

describe.each(DIALECTS)('live channel: join-room (%s)', (dialect) => {
  let t: TestApp;
  let url: string;
  let owner: TestUser;
  let base: { id: number; uuid: string; name: string; workspaceId: number };
  const clients: LiveClient[] = [];
  const track = (c: LiveClient) => (clients.push(c), c);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    url = await listen(t);
    t.container.dispatcher.start();
    owner = await createUser(t);
    base = await createBase(t, owner);
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  it('serves Engine.IO v4 polling at /api-gateway/socket.io', async () => {
    const res = await fetch(`${url}/api-gateway/socket.io/?EIO=4&transport=polling`);
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body.startsWith('0{')).toBe(true);
    expect(JSON.parse(body.slice(1))).toMatchObject({ sid: expect.any(String), upgrades: ['websocket'] });
  });

  it('joins with a valid Base-Token over polling and over websocket', async () => {
    const token = await baseToken(t, owner, base);
    for (const transports of [['polling'], ['websocket']]) {
      const c = track(client(url, base.uuid, { transports }));
      expect(await join(c, base.uuid, token)).toEqual({ status: true });
      expect(c.socket.connected).toBe(true);
    }
  });

  it('refuses a forged token with an error event and a disconnect', async () => {
    const token = await baseToken(t, owner, base);
    const forged = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    const c = track(client(url, base.uuid));
    expect(await join(c, base.uuid, forged)).toEqual({ status: false, error_msg: 'Permission denied.' });
    expect(await disconnected(c)).toBe('io server disconnect');
    expect(c.messages('error')).toEqual([{ error_msg: 'Permission denied.' }]);
  });

  it('refuses a token of another base, and arguments that are not strings', async () => {
    const other = await createBase(t, owner);
    const otherToken = await baseToken(t, owner, other);
    const c = track(client(url, base.uuid));
    expect(await join(c, base.uuid, otherToken)).toEqual({ status: false, error_msg: 'Permission denied.' });
    await disconnected(c);
    const bad = track(client(url, base.uuid));
    expect(await bad.socket.timeout(5000).emitWithAck('join-room', { uuid: base.uuid }, 42)).toEqual({ status: false, error_msg: 'Permission denied.' });
    await disconnected(bad);
  });

  it('refuses a join for another base than the one connected with (?dtable_uuid=)', async () => {
    const token = await baseToken(t, owner, base);
    const other = await createBase(t, owner);
    const c = track(client(url, other.uuid));
    expect((await join(c, base.uuid, token)).status).toBe(false);
  });

  it('disconnects the sockets of a revoked credential within seconds, and no others', async () => {
    const guest = await createUser(t);
    const shared = await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email, permission: 'rw' } });
    expect(shared.statusCode).toBe(201);
    const guestSocket = track(await joined(url, base.uuid, await baseToken(t, guest, base)));
    const ownerSocket = track(await joined(url, base.uuid, await baseToken(t, owner, base)));
    const removed = await t.request({ method: 'DELETE', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email } });
    expect(removed.statusCode).toBe(200);
    expect(await disconnected(guestSocket, 6000)).toBe('io server disconnect');
    expect(guestSocket.messages('error')).toEqual([{ error_msg: 'Permission denied.' }]);
    await settle(100);
    expect(ownerSocket.socket.connected).toBe(true);
  });

  it('disconnects the sockets of a deactivated user and of a user whose password changed, and no others', async () => {
    const admin = await createUser(t, { admin: true });
    const [deactivated, renewed] = [await createUser(t), await createUser(t)];
    for (const guest of [deactivated, renewed]) {
      const shared = await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email, permission: 'rw' } });
      expect(shared.statusCode).toBe(201);
    }
    const [deactivatedSocket, renewedSocket] = [track(await joined(url, base.uuid, await baseToken(t, deactivated, base))), track(await joined(url, base.uuid, await baseToken(t, renewed, base)))];
    const ownerSocket = track(await joined(url, base.uuid, await baseToken(t, owner, base)));
    const off = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${deactivated.email}/`, token: admin.token, payload: { is_active: false } });
    expect(off.statusCode).toBe(200);
    const password = await t.request({ method: 'PUT', url: '/api/v2.1/user/password/', token: renewed.token, payload: { old_password: renewed.password, new_password: 'a-new-password' } });
    expect(password.statusCode).toBe(200);
    expect(await disconnected(deactivatedSocket, 6000)).toBe('io server disconnect');
    expect(await disconnected(renewedSocket, 6000)).toBe('io server disconnect');
    expect(deactivatedSocket.messages('error')).toEqual([{ error_msg: 'Permission denied.' }]);
    await settle(100);
    expect(ownerSocket.socket.connected).toBe(true);
  });

  it('refuses an expired token with "Token expired." (and drops a joined socket once its token expires)', async () => {
    const token = await baseToken(t, owner, base);
    const live = track(await joined(url, base.uuid, token));
    t.clock.advance(3 * 24 * 3600 * 1000 + 1000);
    const c = track(client(url, base.uuid));
    expect(await join(c, base.uuid, token)).toEqual({ status: false, error_msg: 'Token expired.' });
    await disconnected(c);
    await waitFor(() => live.disconnectReason !== null, 'the expired socket to be dropped', 6000);
    expect(live.messages('error')).toEqual([{ error_msg: 'Token expired.' }]);
  });
});
