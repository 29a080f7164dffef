import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('sharing (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let base: TestBase;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t, { email: 'owner@example.com', name: 'Owner' });
    bob = await createUser(t, { email: 'bob@example.com', name: 'Bob' });
    carol = await createUser(t, { email: 'carol@example.com', name: 'Carol' });
    base = await createBase(t, owner, 'Shared base');
  });
  afterAll(() => t.close());

  const share = (user: TestUser, method: 'GET' | 'POST' | 'PUT' | 'DELETE', payload?: object) =>
    t.request({ method, url: basePath(base, 'share/'), token: user.token, ...(payload ? { payload } : {}) });

  const accessPermission = async (user: TestUser) => {
    const res = await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: user.token });
    if (res.statusCode !== 200) return res.statusCode;
    const payload = JSON.parse(Buffer.from(res.json().access_token.split('.')[1], 'base64url').toString());
    return payload.permission as string;
  };

  it('shares, lists, updates and removes a user share', async () => {
    expect(await accessPermission(bob)).toBe(403);
    const add = await share(owner, 'POST', { email: bob.email, permission: 'r' });
    expect(add.statusCode).toBe(201);
    expect(add.json()).toEqual({ success: true });
    expect(await accessPermission(bob)).toBe('r');

    const list = await share(owner, 'GET');
    expect(list.json()).toEqual({
      user_list: [{ email: bob.virtualId, name: 'Bob', contact_email: bob.email, avatar_url: '', permission: 'r' }],
    });

    const update = await share(owner, 'PUT', { email: bob.virtualId, permission: 'rw' });
    expect(update.json()).toEqual({ success: true });
    expect(await accessPermission(bob)).toBe('rw');

    const remove = await share(owner, 'DELETE', { email: bob.email });
    expect(remove.json()).toEqual({ success: true });
    expect(await accessPermission(bob)).toBe(403);
    expect((await share(owner, 'GET')).json()).toEqual({ user_list: [] });
  });

  it('validates input before touching anything', async () => {
    const cases: Array<[object, number]> = [
      [{ email: bob.email, permission: 'owner' }, 400],
      [{ email: bob.email, permission: '' }, 400],
      [{ email: bob.email }, 400],
      [{ permission: 'r' }, 400],
      [{ email: 42, permission: 'r' }, 400],
      [{ email: 'ghost@example.com', permission: 'r' }, 404],
      [{ email: owner.email, permission: 'r' }, 400],
    ];
    for (const [payload, status] of cases) {
      const res = await share(owner, 'POST', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(status);
      expect(res.json()).toHaveProperty('error_msg');
    }
    expect((await share(owner, 'GET')).json().user_list).toEqual([]);
  });

  it('refuses a duplicate share with 409 and unknown shares with 404', async () => {
    expect((await share(owner, 'POST', { email: carol.email, permission: 'r' })).statusCode).toBe(201);
    const dup = await share(owner, 'POST', { email: carol.email, permission: 'rw' });
    expect(dup.statusCode).toBe(409);
    expect((await share(owner, 'PUT', { email: bob.email, permission: 'rw' })).statusCode).toBe(404);
    expect((await share(owner, 'DELETE', { email: bob.email })).statusCode).toBe(404);
    expect((await share(owner, 'GET')).json().user_list).toEqual([expect.objectContaining({ email: carol.virtualId, permission: 'r' })]);
  });

  it('lets only owner and admins manage shares', async () => {
    // carol has r: cannot list or share
    expect((await share(carol, 'GET')).statusCode).toBe(403);
    expect((await share(carol, 'POST', { email: bob.email, permission: 'r' })).json()).toEqual({ error_msg: 'Permission denied.' });
    // a stranger is refused too
    expect((await share(bob, 'GET')).statusCode).toBe(403);
    // an admin share may manage
    await share(owner, 'PUT', { email: carol.email, permission: 'admin' });
    expect((await share(carol, 'POST', { email: bob.email, permission: 'rw' })).statusCode).toBe(201);
    expect(await accessPermission(carol)).toBe('rw');
  });

  it('answers 404 for unknown workspaces and bases, in that order', async () => {
    const noWs = await t.request({ method: 'GET', url: '/api/v2.1/workspace/99999/dtable/Nope/share/', token: owner.token });
    expect(noWs.json()).toEqual({ error_msg: 'Workspace 99999 not found.' });
    const noBase = await t.request({ method: 'GET', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/Nope/share/`, token: owner.token });
    expect(noBase.json()).toEqual({ error_msg: 'dtable Nope not found.' });
  });
});

describe.each(DIALECTS)('share changes and their revocation commit together (%s)', (dialect) => {
  it('keeps the share when revoking its tokens fails, and the tokens keep working', async () => {
    const t = await createTestApp(dialect);
    try {
      const owner = await createUser(t);
      const guest = await createUser(t);
      const base = await createBase(t, owner);
      await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email, permission: 'rw' } });
      t.container.shares.onShareChanging(async () => {
        throw new Error('revocation store down');
      });
      const removed = await t.request({ method: 'DELETE', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email } });
      expect(removed.statusCode).toBe(500);
      expect(removed.json()).toEqual({ error_msg: 'Internal Server Error' });
      const shares = await t.request({ method: 'GET', url: basePath(base, 'share/'), token: owner.token });
      expect(shares.json().user_list).toEqual([expect.objectContaining({ email: guest.virtualId, permission: 'rw' })]);
    } finally {
      await t.close();
    }
  });
});
