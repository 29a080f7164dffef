import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDue } from '../../src/modules/webhooks/deliveries.repository.js';
import { HEARTBEAT_STALE_MS } from '../../src/modules/webhooks/delivery.service.js';
import { ManualClock } from '../../src/shared/clock.js';
import { DIALECTS, SharedDatabase, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { Receiver, changeEvent, createWebhook, emit, webhookApp } from './webhooks-support.js';

const rowOf = (body: string) => JSON.parse(body).data.row_id as string;

/** Issues 16 and 18: parallel lanes with per-row order, fair slots, leases of dead workers. */
describe.each(DIALECTS)('webhook lanes and fairness (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect, { WEBHOOK_CONCURRENCY: '16' })); // default WEBHOOK_LANES (32)
  });
  afterAll(() => t.close());

  it('sends different rows of one webhook in parallel while each row keeps its order', async () => {
    const base = await createBase(t, owner);
    const receiver = await new Receiver().start();
    try {
      // Random short answers shuffle completion order; a later change of a row must still arrive later.
      receiver.reply = () => ({ status: 200, delayMs: Math.floor(Math.random() * 15) });
      await createWebhook(t, owner, base, { url: receiver.url('/lanes') });
      const rows = ['rowA', 'rowB', 'rowC', 'rowD', 'rowE', 'rowF'].map((r) => r.padEnd(22, 'x'));
      const events = Array.from({ length: 8 }, (_, round) => rows.map((rowId) => changeEvent(base, { rowId, rowName: `${rowId}#${round}` }))).flat();
      await emit(t, events);
      await t.container.webhooks.delivery.runPool(() => true);
      expect(receiver.received).toHaveLength(events.length);
      for (const rowId of rows) {
        const sent = receiver.bodies().filter((b) => b.data.row_id === rowId).map((b) => b.data.row_name);
        expect(sent).toEqual(events.filter((e) => e.rowId === rowId).map((e) => e.rowName));
      }
      expect(receiver.maxOpen.get('/lanes')).toBeGreaterThan(1);
      expect(receiver.maxOpen.get('/lanes')).toBeLessThanOrEqual(rows.length); // one per row at a time
    } finally {
      await receiver.close();
    }
  });

  it('a row whose delivery waits for a retry holds back only that row', async () => {
    const base = await createBase(t, owner);
    const receiver = await new Receiver().start();
    try {
      const hook = await createWebhook(t, owner, base, { url: receiver.url('/retry') });
      const stuck = changeEvent(base, { rowId: 'stuck'.padEnd(22, 'x') });
      const stuckLater = changeEvent(base, { rowId: stuck.rowId });
      const other = changeEvent(base, { rowId: 'other'.padEnd(22, 'x') });
      let first = true;
      receiver.reply = (r) => (rowOf(r.body) === stuck.rowId && first ? ((first = false), { status: 503 }) : { status: 200 });
      await emit(t, [stuck, stuckLater, other]);
      await t.container.webhooks.delivery.runPool(() => true);
      expect(receiver.received.map((r) => rowOf(r.body)).sort()).toEqual([other.rowId, stuck.rowId].sort());
      const pending = await t.container.db.selectFrom('webhook_deliveries').select('event_id').where('webhook_id', '=', hook.id).where('status', '=', 'pending').execute();
      expect(pending).toHaveLength(2); // the retry and the later change of its row
    } finally {
      await receiver.close();
    }
  });

  it('a fast webhook gets a slot within one attempt while 16 slow webhooks have queues', async () => {
    const slowBase = await createBase(t, owner);
    const fastBase = await createBase(t, owner);
    const receiver = await new Receiver().start();
    try {
      receiver.reply = (r) => (r.path.startsWith('/slow') ? { status: 200, delayMs: 150 } : { status: 200 });
      for (let i = 0; i < 16; i++) await createWebhook(t, owner, slowBase, { url: receiver.url(`/slow${i}`) });
      await createWebhook(t, owner, fastBase, { url: receiver.url('/fast') });
      await emit(t, Array.from({ length: 4 }, () => changeEvent(slowBase)));
      const pool = t.container.webhooks.delivery.runPool(() => true);
      // Every slot (WEBHOOK_CONCURRENCY 16) is busy with a slow receiver; then the fast webhook's change comes.
      for (let i = 0; i < 400 && receiver.maxOpenTotal < 16; i++) await new Promise((r) => setTimeout(r, 5));
      expect(receiver.maxOpenTotal).toBe(16);
      await emit(t, [changeEvent(fastBase)]);
      t.container.webhooks.delivery.nudge();
      await pool;
      const order = receiver.received.map((r) => r.path);
      expect(order).toHaveLength(16 * 4 + 1);
      // It goes out as soon as the first slow attempt ends (in the second wave), not after 64 slow ones.
      expect(order.indexOf('/fast')).toBeLessThan(32);
    } finally {
      await receiver.close();
    }
  });
});

describe.each(DIALECTS.filter((d) => d === 'postgres'))('leases tied to a live worker (%s)', (dialect) => {
  it('a live worker keeps its lease; a worker silent for the stale time loses it to another', async () => {
    const shared = new SharedDatabase(dialect);
    const clock = new ManualClock();
    const env = { WEBHOOK_ALLOW_PRIVATE: 'true' };
    const a = await createTestApp(dialect, env, { database: await shared.open(), clock });
    const b = await createTestApp(dialect, env, { database: await shared.open(), clock });
    try {
      const owner = await createUser(a);
      const base = await createBase(a, owner);
      await createWebhook(a, owner, base, { url: 'http://127.0.0.1:9/never' });
      await emit(a, [changeEvent(base)]);
      const claim = (app: TestApp, owner: string) =>
        claimDue(app.container.db, dialect, {
          now: clock.now(),
          limit: 10,
          leaseUntil: clock.now() + 75_000,
          token: owner,
          owner,
          staleBefore: clock.now() - HEARTBEAT_STALE_MS,
        });
      await a.container.webhooks.delivery.heartbeat();
      expect(await claim(a, a.container.webhooks.delivery.instanceId)).toHaveLength(1); // then "killed": never beats again
      await b.container.webhooks.delivery.heartbeat();
      expect(await claim(b, b.container.webhooks.delivery.instanceId)).toEqual([]); // a is alive: its lease holds
      clock.advance(HEARTBEAT_STALE_MS + 1);
      const taken = await claim(b, b.container.webhooks.delivery.instanceId);
      expect(taken).toHaveLength(1); // within seconds, not the lease's 75 s
    } finally {
      await a.close();
      await b.close();
      await shared.dispose();
    }
  });
});
