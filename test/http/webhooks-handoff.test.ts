import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimedDelivery } from '../../src/modules/webhooks/deliveries.repository.js';
import { HEARTBEAT_STALE_MS } from '../../src/modules/webhooks/delivery.service.js';
import { ManualClock } from '../../src/shared/clock.js';
import { DIALECTS, SharedDatabase, createBase, createTestApp, createUser, type TestApp } from '../helpers/index.js';
import { Receiver, changeEvent, createWebhook, drain, emit } from './webhooks-support.js';

/**
 * The in-process hand-off (issue 18): while this process runs the delivery loop, the dispatcher creates
 * the deliveries that may go at once already leased to it and passes them over in memory after its
 * commit — no claim. Everything else goes through the claim, with the same guarantees.
 */

interface Watched {
  /** Deliveries passed over in memory. */
  handed: ClaimedDelivery[];
  /** Claims the worker made since `watch`. */
  claims: number;
  /** While true, claims find nothing (only a hand-off can send). */
  blockClaims: boolean;
  /** While true, handed-off deliveries are dropped after the commit (a crash before sending). */
  dropHandoffs: boolean;
}

/** Start the loop, wait until it may take hand-offs, then observe its claims and hand-offs. */
async function watch(t: TestApp): Promise<Watched> {
  const delivery = t.container.webhooks.delivery;
  const inner = delivery as unknown as Record<string, unknown>;
  t.container.webhooks.deliverer.start();
  // The first round frees old leases (SQLite) and the first heartbeat is written (PostgreSQL).
  for (let i = 0; i < 200 && delivery.openLease(t.clock.now()) === null; i++) await new Promise((r) => setTimeout(r, 10));
  expect(delivery.openLease(t.clock.now())).not.toBeNull();
  const watched: Watched = { handed: [], claims: 0, blockClaims: false, dropHandoffs: false };
  const claim = (inner.claim as (...args: unknown[]) => Promise<ClaimedDelivery[]>).bind(delivery);
  inner.claim = (...args: unknown[]) => {
    watched.claims++;
    return watched.blockClaims ? Promise.resolve([]) : claim(...args);
  };
  const accept = delivery.accept.bind(delivery);
  delivery.accept = (list: ClaimedDelivery[], token: string, reserved: number) => {
    watched.handed.push(...list);
    accept(watched.dropHandoffs ? [] : list, token, reserved);
  };
  return watched;
}

/** Wait until every delivery is finished (its outcome recorded). */
async function idle(t: TestApp): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const pending = await t.container.db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').execute();
    if (pending.length === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('deliveries still pending');
}

/** Wait until no delivery is leased (every attempt's outcome recorded). */
async function idleLease(t: TestApp): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const leased = await t.container.db.selectFrom('webhook_deliveries').select('id').where('claim_token', 'is not', null).execute();
    if (leased.length === 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('deliveries still leased');
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

describe.each(DIALECTS)('webhook hand-off (%s)', (dialect) => {
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  async function app(env: Record<string, string> = {}, database?: SharedDatabase) {
    const clock = new ManualClock(Date.now());
    const t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', ...env }, { clock, ...(database ? { database: await database.open() } : {}) });
    return { t, clock };
  }

  it('sends a handed-off delivery without a claim, leased like a claim and logged', async () => {
    receiver.received.length = 0;
    receiver.reply = () => ({ status: 200 });
    const { t } = await app();
    try {
      const user = await createUser(t);
      const base = await createBase(t, user);
      const hook = await createWebhook(t, user, base, { url: receiver.url('/handed') });
      const watched = await watch(t);
      watched.blockClaims = true; // a claim finds nothing: only the hand-off can send
      const event = changeEvent(base);
      await emit(t, [event]);
      await until(() => receiver.received.length === 1, 'the handed-off delivery');
      expect(watched.handed).toHaveLength(1);
      expect(JSON.parse(receiver.received[0]!.body).data.row_id).toBe(event.rowId);
      const row = await t.container.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).executeTakeFirstOrThrow();
      expect(receiver.received[0]!.headers['webhook-id']).toBe(row.msg_id);
      await until(() => watched.handed.length === 1 && receiver.received.length === 1, 'the record');
      await t.container.webhooks.deliverer.stop(); // waits for the attempt's record
      const done = await t.container.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
      expect(done).toMatchObject({ status: 'succeeded', claim_token: null, lease_owner: null });
      expect(Number(done.attempts)).toBe(1);
      const attempts = await t.container.db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', row.id).execute();
      expect(attempts.map((a) => a.outcome)).toEqual(['success']);
    } finally {
      await t.close();
    }
  });

  it('keeps per-row order when several changes of one row come in one dispatcher batch', async () => {
    receiver.received.length = 0;
    receiver.reply = () => ({ status: 200, delayMs: Math.floor(Math.random() * 6) });
    const { t } = await app({ WEBHOOK_LANES: '8' });
    try {
      const user = await createUser(t);
      const base = await createBase(t, user);
      await createWebhook(t, user, base, { url: receiver.url('/rows') });
      const watched = await watch(t);
      const [a, b, c] = ['ra', 'rb', 'rc'].map((r) => r.padEnd(22, 'x'));
      const batch = [a, a, b, a, c, b, a, c].map((rowId, i) => changeEvent(base, { rowId: rowId!, rowName: `${rowId}#${i}` }));
      await emit(t, batch); // one dispatcher batch
      // Only the first change of each row may go at once; the rest wait for the claim.
      expect(watched.handed.map((d) => JSON.parse(d.body).data.row_id)).toEqual([a, b, c]);
      await until(() => receiver.received.length === batch.length, 'every delivery');
      for (const rowId of [a, b, c]) {
        const sent = receiver.bodies().map((body) => body.data).filter((d) => d.row_id === rowId);
        expect(sent.map((d) => d.row_name)).toEqual(batch.filter((e) => e.rowId === rowId).map((e) => e.rowName));
      }
      // A later batch: a row whose delivery is still unfinished waits too. (The first later delivery is
      // held for a second, so it is still unfinished when the second change comes, even under load.)
      await idle(t);
      receiver.reply = (request) => ({ status: 200, delayMs: request.body.includes('later 1') ? 1000 : 0 });
      const first = changeEvent(base, { rowId: a!, rowName: 'later 1' });
      await emit(t, [first]);
      await until(() => receiver.received.length === batch.length + 1, 'the later delivery on the wire');
      await emit(t, [changeEvent(base, { rowId: a!, rowName: 'later 2' })]);
      expect(watched.handed.map((d) => JSON.parse(d.body).data.row_name).slice(3)).toEqual(['later 1']);
      await until(() => receiver.received.length === batch.length + 2, 'the second later delivery');
      expect(receiver.bodies().slice(-2).map((body) => body.data.row_name)).toEqual(['later 1', 'later 2']);
    } finally {
      await t.close();
    }
  });

  it('re-sends with the same webhook-id after a crash between the commit and the send', async () => {
    receiver.received.length = 0;
    receiver.reply = () => ({ status: 200 });
    const shared = new SharedDatabase(dialect);
    try {
      const { t: first, clock } = await app({}, shared);
      let msgId: string;
      try {
        const user = await createUser(first);
        const base = await createBase(first, user);
        const hook = await createWebhook(first, user, base, { url: receiver.url('/crash') });
        const watched = await watch(first);
        watched.blockClaims = true;
        watched.dropHandoffs = true; // the process "dies" after the commit, before sending
        await emit(first, [changeEvent(base)]);
        expect(watched.handed).toHaveLength(1);
        const row = await first.container.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).executeTakeFirstOrThrow();
        // Durable before it is sent: the row is there, leased to this worker like a claim.
        expect(row).toMatchObject({ status: 'pending', lease_owner: first.container.webhooks.delivery.instanceId });
        expect(row.claim_token).not.toBeNull();
        expect(Number(row.locked_until)).toBeGreaterThan(clock.now());
        msgId = row.msg_id;
      } finally {
        await first.close();
      }
      expect(receiver.received).toHaveLength(0);
      // SQLite frees every lease at the next start; PostgreSQL takes over a silent worker's lease.
      clock.advance(HEARTBEAT_STALE_MS + 1);
      const second = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' }, { clock, database: await shared.open() });
      try {
        expect(await drain(second)).toBe(1);
        expect(receiver.received).toHaveLength(1);
        expect(receiver.received[0]!.headers['webhook-id']).toBe(msgId);
      } finally {
        await second.close();
      }
    } finally {
      await shared.dispose();
    }
  });

  it('keeps strict order with WEBHOOK_LANES=1', async () => {
    receiver.received.length = 0;
    // The first answer waits until `more` is queued, so the queue cannot empty before that.
    let release!: () => void;
    const queued = new Promise<void>((resolve) => (release = resolve));
    let answered = 0;
    receiver.reply = () => ({ status: 200, delayMs: Math.floor(Math.random() * 5), ...(answered++ === 0 ? { after: queued } : {}) });
    const { t } = await app({ WEBHOOK_LANES: '1' });
    try {
      const user = await createUser(t);
      const base = await createBase(t, user);
      await createWebhook(t, user, base, { url: receiver.url('/strict') });
      const watched = await watch(t);
      const events = ['s1', 's2', 's3', 's1', 's4'].map((r, i) => changeEvent(base, { rowId: r.padEnd(22, 'x'), rowName: `${r}#${i}` }));
      await emit(t, events);
      expect(watched.handed).toHaveLength(1); // only the oldest of an empty queue
      const more = [changeEvent(base), changeEvent(base)];
      await emit(t, more); // the queue is not empty: these wait for the claim
      release();
      expect(watched.handed).toHaveLength(1);
      await until(() => receiver.received.length === events.length + more.length, 'every delivery');
      expect(receiver.bodies().map((b) => b.data.row_name)).toEqual([...events, ...more].map((e) => e.rowName));
      expect(receiver.maxOpen.get('/strict')).toBe(1);
      // Once the queue is empty, the next one is handed off again.
      await until(() => watched.handed.length === 1 && receiver.open.get('/strict') === 0, 'an idle receiver');
      await idle(t);
      await emit(t, [changeEvent(base)]);
      expect(watched.handed).toHaveLength(2);
    } finally {
      release();
      await t.close();
    }
  });

  it('with WEBHOOK_LANES=1 hands nothing off past a delivery waiting for its retry', async () => {
    receiver.received.length = 0;
    let first = true;
    receiver.reply = () => {
      const answer = first ? { status: 503 } : { status: 200 };
      first = false;
      return answer;
    };
    const { t, clock } = await app({ WEBHOOK_LANES: '1' });
    try {
      const user = await createUser(t);
      const base = await createBase(t, user);
      await createWebhook(t, user, base, { url: receiver.url('/retry') });
      const watched = await watch(t);
      const failing = changeEvent(base);
      await emit(t, [failing]);
      expect(watched.handed).toHaveLength(1);
      await until(() => receiver.received.length === 1, 'the first attempt');
      await idleLease(t);
      const next = changeEvent(base); // another row: strict order still holds it back
      await emit(t, [next]);
      expect(watched.handed).toHaveLength(1);
      clock.advance(60_000);
      t.container.webhooks.deliverer.wake();
      await until(() => receiver.received.length === 3, 'the retry and the next delivery');
      expect(receiver.bodies().map((b) => b.data.row_id)).toEqual([failing.rowId, failing.rowId, next.rowId]);
    } finally {
      await t.close();
    }
  });

  it('hands nothing off for an invalid or paused webhook, nor past a queued backlog', async () => {
    receiver.received.length = 0;
    receiver.reply = () => ({ status: 200 });
    const { t } = await app({ WEBHOOK_MAX_BACKLOG: '10' });
    try {
      const user = await createUser(t);
      const base = await createBase(t, user);
      const other = await createBase(t, user);
      const invalid = await createWebhook(t, user, base, { url: receiver.url('/invalid') });
      await t.container.db.updateTable('webhooks').set({ is_valid: 0 }).where('id', '=', invalid.id).execute();
      const paused = await createWebhook(t, user, base, { url: receiver.url('/paused') });
      await createWebhook(t, user, other, { url: receiver.url('/backlog') });
      const watched = await watch(t);
      watched.blockClaims = true;
      // Queued while the loop did not run: a backlog the claim has not taken yet.
      await t.container.webhooks.deliverer.stop();
      const old = changeEvent(other);
      await emit(t, [old]);
      t.container.webhooks.deliverer.start();
      // Eleven changes pass /paused's backlog cap (10): it is paused and gets none of them.
      await emit(t, Array.from({ length: 11 }, () => changeEvent(base)));
      const hooks = await t.container.db.selectFrom('webhooks').select(['id', 'is_valid']).where('base_id', '=', base.id).orderBy('id').execute();
      expect(hooks.map((w) => [Number(w.id), Number(w.is_valid)])).toEqual([
        [invalid.id, 0],
        [paused.id, 0],
      ]);
      // A new change of another row does not jump the queued one.
      const fresh = changeEvent(other);
      await emit(t, [fresh]);
      expect(watched.handed).toHaveLength(0);
      watched.blockClaims = false;
      t.container.webhooks.deliverer.wake();
      await until(() => receiver.received.length === 2, 'the backlog');
      expect(receiver.received.map((r) => r.path)).toEqual(['/backlog', '/backlog']);
      expect(receiver.bodies().map((b) => b.data.row_id)).toEqual([old.rowId, fresh.rowId]);
      expect(watched.claims).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });
});
