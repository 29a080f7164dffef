import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, type TestApp, type TestUser } from '../helpers/index.js';
import { changeEvent, createWebhook, emit, freshTarget, webhookApp } from './webhooks-support.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 6, 10, 0, 0);
const REPLAYED = 120;
const LIVE = 5;

/** Polls `done` (no fixed sleeps; a generous bound so a loaded machine only makes it slower). */
async function until(done: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Issue 31.4: a large replay runs behind live deliveries without holding them back. The delivery loop
 * runs as in production (started, refilling its pool); the assertions are on order and progress only.
 */
describe.each(DIALECTS)('live deliveries during a large replay (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect, { WEBHOOK_LANES: '2', WEBHOOK_REPLAY_MAX: '1000', WEBHOOK_MAX_BACKLOG: '1000' }));
  });
  afterAll(() => t?.close());

  it('live changes are delivered while the replay is still in progress', async () => {
    const { base, receiver } = await freshTarget(t, owner);
    try {
      t.clock.set(T0);
      // Yesterday's changes, committed before the webhook existed: the replay brings them.
      const old = Array.from({ length: REPLAYED }, () => changeEvent(base));
      await emit(t, old);
      const oldRows = new Set(old.map((e) => e.rowId));
      t.clock.set(T0 + HOUR);
      const hook = await createWebhook(t, owner, base, { url: receiver.url() });
      // The receiver takes a little while per replayed change, so the replay lasts a while.
      receiver.reply = (request) => ({ status: 200, ...(oldRows.has(rowOf(request.body)) ? { delayMs: 5 } : {}) });
      const replay = await t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/replay/`), token: owner.token, payload: { from: T0 / 1000, to: T0 / 1000 } });
      expect(replay.statusCode, replay.body).toBe(200);
      expect(replay.json()).toEqual({ count: REPLAYED });

      const deliverer = t.container.webhooks.deliverer;
      deliverer.start();
      try {
        await until(() => receiver.received.length >= 10, 'the replay to start');
        const receivedAtLive = receiver.received.length;
        const live = Array.from({ length: LIVE }, () => changeEvent(base));
        await emit(t, live);
        await until(() => receiver.received.length >= REPLAYED + LIVE, 'every delivery');

        const rows = receiver.received.map((r) => rowOf(r.body));
        const liveRows = new Set(live.map((e) => e.rowId));
        // Everything arrived once: the whole replay and every live change.
        expect(new Set(rows).size).toBe(REPLAYED + LIVE);
        expect(rows.filter((row) => liveRows.has(row))).toEqual(live.map((e) => e.rowId));
        const lastLive = Math.max(...live.map((e) => rows.indexOf(e.rowId)));
        const replayedBetween = rows.slice(receivedAtLive, lastLive).filter((row) => oldRows.has(row)).length;
        const replayedAfter = rows.slice(lastLive + 1).filter((row) => oldRows.has(row)).length;
        // The live changes overtook the replay's queue: only the replays already in flight (two
        // lanes) and a claim or two came between their commit and their receipt, while most of the
        // replay was still to be sent after them (were they queued behind it, none would be).
        expect(replayedBetween).toBeLessThan(40);
        expect(replayedAfter).toBeGreaterThan(REPLAYED - receivedAtLive - 40);
      } finally {
        await deliverer.stop();
      }
    } finally {
      await receiver.close();
    }
  }, 120_000);
});

function rowOf(body: string): string {
  return String((JSON.parse(body) as { data: { row_id: string } }).data.row_id);
}
