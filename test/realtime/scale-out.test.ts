import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Realtime } from '../../src/modules/realtime/index.js';
import { DIALECTS, basePath, baseToken, createTestApp, createUser, type TestApp } from '../helpers/index.js';
import { RedisProcess, secondInstance, type Instance } from '../http/rate-limit.helpers.js';
import { appendRows, gateway, through, type Gateway } from '../http/rows.fixtures.js';
import { disconnected, joined, settle, waitFor, type LiveClient } from './live.support.js';

/*
 * Two app instances on one database and one Redis (TEST_REDIS_URL, else a redis-server of the suite's
 * own), each listening with its own socket.io server: a change made through either reaches the
 * clients of both exactly once, and so does a notification.
 */

async function listenOn(app: { listen(o: object): Promise<string>; server: { address(): unknown } }): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
}

/** Both adapters see each other (heartbeats read from the stream), so broadcasts cross over. */
async function linked(a: Realtime, b: Realtime): Promise<void> {
  const count = async (r: Realtime) => (r.io.of('/').adapter as unknown as { serverCount(): Promise<number> }).serverCount();
  const until = Date.now() + 15_000;
  while ((await count(a)) < 2 || (await count(b)) < 2) {
    if (Date.now() > until) throw new Error('the two socket.io servers never saw each other');
    await settle(100);
  }
}

/** The second instance in the shape the gateway fixtures call. */
function asTestApp(i: Instance): TestApp {
  return {
    app: i.app,
    container: i.container,
    request: ({ token, headers, ...rest }) => i.app.inject({ ...rest, headers: { ...(token ? { authorization: `Token ${token}` } : {}), ...headers } }),
  } as TestApp;
}

describe.each(DIALECTS)('live channel across two instances through Redis (%s)', (dialect) => {
  let own: RedisProcess | null = null;
  let t: TestApp;
  let other: Instance;
  let g: Gateway;
  let onFirst: LiveClient;
  let onSecond: LiveClient;
  let firstUrl: string;
  let secondUrl: string;
  const extra: LiveClient[] = [];

  beforeAll(async () => {
    let redisUrl = process.env.TEST_REDIS_URL;
    if (!redisUrl) {
      own = await RedisProcess.start();
      redisUrl = own.url;
    }
    t = await createTestApp(dialect, { REDIS_URL: redisUrl });
    other = await secondInstance(t);
    await Promise.all([t.container.realtime.ready(), other.container.realtime.ready()]);
    [firstUrl, secondUrl] = [await listenOn(t.app as never), await listenOn(other.app as never)];
    t.container.dispatcher.start();
    other.container.dispatcher.start();
    await linked(t.container.realtime, other.container.realtime);
    g = await gateway(t);
    onFirst = await joined(firstUrl, g.base.uuid, g.token);
    onSecond = await joined(secondUrl, g.base.uuid, await baseToken(t, g.owner, g.base));
  }, 60_000);
  afterAll(async () => {
    onFirst?.close();
    onSecond?.close();
    extra.forEach((c) => c.close());
    await other?.close();
    await t?.close();
    await own?.kill();
  });

  /** The names of the rows inserted, in the order received (a batch is one insert_rows). */
  const names = (c: LiveClient) =>
    (c.messages('update-dtable') as Array<{ op_type: string; row_data?: Record<string, unknown>; row_datas?: Array<Record<string, unknown>> }>)
      .flatMap((op) => (op.op_type === 'insert_row' ? [op.row_data!] : op.op_type === 'insert_rows' ? op.row_datas! : []))
      .map((row) => row['0000']);

  it('delivers a change made on either instance to the clients of both, exactly once and in order', async () => {
    await appendRows(g, 'Table1', [{ Name: 'via first 1' }, { Name: 'via first 2' }]);
    await appendRows(through(asTestApp(other), g), 'Table1', [{ Name: 'via second' }]);
    const expected = ['via first 1', 'via first 2', 'via second'];
    await waitFor(() => names(onFirst).length >= 3 && names(onSecond).length >= 3, 'both clients to get three inserts', 10_000);
    await settle(1500); // a duplicate from the other instance's dispatcher would arrive by now
    expect(names(onFirst)).toEqual(expected);
    expect(names(onSecond)).toEqual(expected);
  });

  it('pushes a notification once to the user on whichever instance they are connected', async () => {
    const before = [onFirst.messages('new-notification').length, onSecond.messages('new-notification').length];
    await other.container.db.transaction().execute((trx) =>
      other.container.notifications.notifyUser(trx, { userId: g.owner.id, msgType: 'webhook_disabled', detail: { n: 1 } }),
    );
    await waitFor(() => onFirst.messages('new-notification').length > before[0]! && onSecond.messages('new-notification').length > before[1]!, 'the notification on both');
    await settle(800);
    expect(onFirst.messages('new-notification').length - before[0]!).toBe(1);
    expect(onSecond.messages('new-notification').length - before[1]!).toBe(1);
  });

  it('lets a client that was on one instance resume on the other within the window, missing nothing', async () => {
    const c = await joined(firstUrl, g.base.uuid, g.token, { reconnection: true, reconnectionDelay: 300, reconnectionDelayMax: 300 });
    extra.push(c);
    // The client resumes from the last message it saw, so it has seen one.
    await appendRows(g, 'Table1', [{ Name: 'seen on first' }]);
    await waitFor(() => names(c).includes('seen on first'), 'a first change');
    const seen = names(c).length;
    const firstId = c.socket.id;
    // The connection drops; the client comes back through the other instance (as behind a load balancer).
    (c.socket.io as unknown as { uri: string }).uri = secondUrl; // (the Manager reconnects to its uri)
    c.socket.io.engine.close();
    await appendRows(g, 'Table1', [{ Name: 'while away 1' }]);
    await appendRows(through(asTestApp(other), g), 'Table1', [{ Name: 'while away 2' }]);
    await waitFor(() => c.socket.connected && names(c).length >= seen + 2, 'the missed changes', 10_000);
    expect(c.socket.recovered).toBe(true);
    expect(c.socket.id).toBe(firstId);
    expect(other.container.realtime.io.of('/').sockets.has(firstId!)).toBe(true);
    expect(t.container.realtime.io.of('/').sockets.has(firstId!)).toBe(false);
    await settle(500);
    expect(names(c).slice(seen)).toEqual(['while away 1', 'while away 2']);
    // Back in the base's room on the second instance without joining again, each change once.
    await appendRows(g, 'Table1', [{ Name: 'back' }]);
    await waitFor(() => names(c).includes('back'), 'a change after recovery');
    await settle(800);
    expect(names(c).slice(seen)).toEqual(['while away 1', 'while away 2', 'back']);
  });

  it('ends the sockets on the other instance of a user deactivated here, and no others', async () => {
    const [admin, guest] = [await createUser(t, { admin: true }), await createUser(t)];
    const shared = await t.request({ method: 'POST', url: basePath(g.base, 'share/'), token: g.owner.token, payload: { email: guest.email, permission: 'rw' } });
    expect(shared.statusCode).toBe(201);
    const token = await baseToken(t, guest, g.base);
    const guestThere = await joined(secondUrl, g.base.uuid, token);
    extra.push(guestThere);
    const off = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${guest.email}/`, token: admin.token, payload: { is_active: false } });
    expect(off.statusCode).toBe(200);
    expect(await disconnected(guestThere, 6000)).toBe('io server disconnect');
    // Dropped for its revoked credential: the other instance refuses the same token.
    const there = await other.app.inject({ method: 'GET', url: `/api-gateway/api/v2/dtables/${g.base.uuid}/`, headers: { authorization: `Token ${token}` } });
    expect(there.statusCode).toBe(403);
    expect(onSecond.socket.connected).toBe(true);
  });
});
