import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { disconnected, joined, listen, settle, type LiveClient } from './live.support.js';

/**
 * Issue 30: access taken away through a group or a view share ends the live channel too — a member
 * removed from a group, and the holder of a view share that is deleted, are dropped within seconds (the
 * sweep re-checks each joined socket's credential); the others stay.
 */
describe.each(DIALECTS)('live channel: group removal and view-share deletion drop the sockets (%s)', (dialect) => {
  let t: TestApp;
  let url: string;
  const clients: LiveClient[] = [];
  const track = (c: LiveClient) => (clients.push(c), c);
  const req = (user: TestUser, method: 'GET' | 'POST' | 'DELETE', path: string, payload?: object) => t.request({ method, url: path, token: user.token, ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    url = await listen(t);
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  it("drops a member removed from the group from its base's room; the other members stay", async () => {
    const [owner, leaving, staying] = [await createUser(t), await createUser(t), await createUser(t)];
    const group = (await req(owner, 'POST', '/api/v2.1/groups/', { name: 'Live team' })).json().id as number;
    for (const u of [leaving, staying]) expect((await req(owner, 'POST', `/api/v2.1/groups/${group}/members/`, { email: u.email })).statusCode).toBe(201);
    const ws = (await req(owner, 'GET', '/api/v2.1/workspaces/')).json().workspace_list.find((w: { group_id?: number }) => w.group_id === group).id as number;
    const made = (await req(owner, 'POST', '/api/v2.1/dtables/', { name: 'live base', workspace_id: ws })).json().table;
    const base: TestBase = { id: made.id, uuid: made.uuid, name: made.name, workspaceId: made.workspace_id };
    const leavingSocket = track(await joined(url, base.uuid, await baseToken(t, leaving, base)));
    const stayingSocket = track(await joined(url, base.uuid, await baseToken(t, staying, base)));

    expect((await req(owner, 'DELETE', `/api/v2.1/groups/${group}/members/${leaving.email}/`)).statusCode).toBe(200);
    expect(await disconnected(leavingSocket, 6000)).toBe('io server disconnect');
    expect(leavingSocket.messages('error')).toEqual([{ error_msg: 'Permission denied.' }]);
    await settle(100);
    expect(stayingSocket.socket.connected).toBe(true);
  });

  it("drops the holder of a deleted view share from the view's room; another holder stays", async () => {
    const owner = await createUser(t);
    const made = (await req(owner, 'POST', '/api/v2.1/dtables/', { name: 'shared view base' })).json().table;
    const base: TestBase = { id: made.id, uuid: made.uuid, name: made.name, workspaceId: made.workspace_id };
    const token = await baseToken(t, owner, base);
    const tableId = (await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/metadata/`, token })).json().metadata.tables[0]._id as string;
    const holder = async () => {
      const user = await createUser(t);
      const share = await req(owner, 'POST', basePath(base, 'user-view-shares/'), { table_id: tableId, view_id: '0000', permission: 'r', to_user: user.email });
      expect(share.statusCode, share.body).toBe(200);
      const viewToken = (await req(user, 'GET', basePath(base, `user-view-share-access-token/?user_view_share_id=${share.json().id}`))).json().access_token as string;
      return { shareId: share.json().id as number, socket: track(await joined(url, base.uuid, viewToken)) };
    };
    const [gone, kept] = [await holder(), await holder()];

    expect((await req(owner, 'DELETE', basePath(base, `user-view-shares/${gone.shareId}/`))).statusCode).toBe(200);
    expect(await disconnected(gone.socket, 6000)).toBe('io server disconnect');
    await settle(100);
    expect(kept.socket.socket.connected).toBe(true);
  });
});
