import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createBase, createTestApp, type TestApp, type TestBase } from '../helpers/index.js';
import { secondInstance, type Instance } from '../http/rate-limit.helpers.js';
import { gateway, type Gateway } from '../http/rows.fixtures.js';
import { joined, listen, waitFor, type LiveClient } from './live.support.js';

/*
 * `basesOfInterest` of the realtime consumer: the bases some instance has live sockets joined to, kept
 * for the reconnection window after the last one left (REALTIME_RECOVERY_SECONDS) and refreshed by the
 * periodic sweep; every other base's events may be skipped unread.
 */
const RECOVERY_MS = 120_000;
const TTL_MS = 60_000; // the presence a join or sweep records (PRESENCE_TTL_MS)

describe.each(DIALECTS)('realtime presence (%s)', (dialect) => {
  let t: TestApp;
  let url: string;
  let g: Gateway;
  let neverJoined: TestBase;
  const clients: LiveClient[] = [];
  const track = (c: LiveClient) => (clients.push(c), c);
  const interest = (ids: number[], on: TestApp | Instance = t) => on.container.realtime.consumer.basesOfInterest(on.container.db, ids);
  const storedExpiry = async (baseId: number) =>
    (await t.container.db.selectFrom('realtime_presence').select('expires_at').where('base_id', '=', baseId).executeTakeFirst())?.expires_at;
  const roomSize = (uuid: string, on: TestApp | Instance = t) => on.container.realtime.io.of('/').adapter.rooms.get(`base:${uuid}`)?.size ?? 0;

  beforeAll(async () => {
    t = await createTestApp(dialect, { REALTIME_RECOVERY_SECONDS: String(RECOVERY_MS / 1000) });
    url = await listen(t);
    g = await gateway(t);
    neverJoined = await createBase(t, g.owner);
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  it('counts a base with a joined socket, not one nobody joined', async () => {
    expect(await interest([g.base.id, neverJoined.id])).toEqual([]);
    track(await joined(url, g.base.uuid, g.token));
    expect(await interest([g.base.id, neverJoined.id])).toEqual([g.base.id]);
    expect(await interest([neverJoined.id, g.base.id, g.base.id])).toEqual([g.base.id]);
    expect(await interest([])).toEqual([]);
  });

  it('keeps a listened-to base present through the periodic sweep', async () => {
    const joinedAt = t.clock.now();
    t.clock.advance(TTL_MS - 10_000);
    await t.container.realtime.sweep();
    // Past what the join recorded: only the sweep's refresh keeps it.
    t.clock.advance(TTL_MS - 10_000);
    expect(t.clock.now()).toBeGreaterThan(joinedAt + TTL_MS);
    expect(await interest([g.base.id])).toEqual([g.base.id]);
  });

  it('keeps a base whose last socket left for the reconnection window, and not after', async () => {
    const leftAt = t.clock.now();
    clients.splice(0).forEach((c) => c.close());
    await waitFor(() => roomSize(g.base.uuid) === 0, 'the socket to leave');
    // The leave is recorded in the background.
    const until = Date.now() + 5000;
    while ((await storedExpiry(g.base.id)) !== leftAt + RECOVERY_MS) {
      if (Date.now() > until) throw new Error('the leave was never recorded');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.clock.set(leftAt + RECOVERY_MS - 1);
    expect(await interest([g.base.id])).toEqual([g.base.id]);
    t.clock.set(leftAt + RECOVERY_MS + 1);
    expect(await interest([g.base.id])).toEqual([]);
    // The sweep forgets it, and a new join brings it back.
    await t.container.realtime.sweep();
    expect(await storedExpiry(g.base.id)).toBeUndefined();
    track(await joined(url, g.base.uuid, g.token));
    expect(await interest([g.base.id])).toEqual([g.base.id]);
    clients.splice(0).forEach((c) => c.close());
    await waitFor(() => roomSize(g.base.uuid) === 0, 'the socket to leave');
  });

  it('sees the sockets of every instance on the database', async () => {
    const other = await secondInstance(t);
    try {
      other.clock.set(t.clock.now());
      const otherUrl = await listen(other as unknown as TestApp);
      const base = await createBase(t, g.owner);
      const token = await baseToken(t, g.owner, base);
      const onOther = track(await joined(otherUrl, base.uuid, token));
      expect(await interest([base.id, neverJoined.id])).toEqual([base.id]);
      // A socket here leaving does not end the other instance's presence, refreshed by its sweeps.
      const here = await joined(url, base.uuid, token);
      here.close();
      await waitFor(() => roomSize(base.uuid) === 0, 'the socket here to leave');
      for (const clock of [t.clock, other.clock]) clock.advance(RECOVERY_MS + TTL_MS);
      await other.container.realtime.sweep();
      expect(await interest([base.id])).toEqual([base.id]);
      onOther.close();
      await waitFor(() => roomSize(base.uuid, other) === 0, 'the socket there to leave');
    } finally {
      await other.close();
    }
  });
});
