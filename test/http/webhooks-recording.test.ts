import { sql, type KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, DialectName } from '../../src/db/index.js';
import { AttemptRecorder } from '../../src/modules/webhooks/attempt-recorder.js';
import { beat } from '../../src/modules/webhooks/claim.repository.js';
import { claimDue } from '../../src/modules/webhooks/deliveries.repository.js';
import { HEARTBEAT_STALE_MS, type AttemptReport } from '../../src/modules/webhooks/delivery.service.js';
import { ManualClock } from '../../src/shared/clock.js';
import { DIALECTS, SharedDatabase, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { Receiver, changeEvent, createWebhook, drain, emit, webhookApp } from './webhooks-support.js';

const success: AttemptReport = {
  startedAt: 0,
  result: { ok: true, status: 200, headers: {}, body: 'ok', truncated: false, durationMs: 1 },
  decision: { outcome: 'success' },
};

/** `db` with a count of the transactions begun through it. */
function countingTransactions(db: Db): { db: Db; count: () => number } {
  let n = 0;
  const proxy = new Proxy(db, {
    get(target, prop) {
      if (prop === 'transaction') n++;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: proxy, count: () => n };
}

/** Issue 18: attempt outcomes are written in batches; the guarantees stay. */
describe.each(DIALECTS)('batched recording of attempts (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect));
  });
  afterAll(() => t.close());

  it('attempts that end together are written in one transaction, each logged; a delivery whose lease was lost gets nothing', async () => {
    const base = await createBase(t, owner);
    const receiver = await new Receiver().start();
    try {
      const hooks = [await createWebhook(t, owner, base, { url: receiver.url('/a') }), await createWebhook(t, owner, base, { url: receiver.url('/b') })];
      await emit(t, Array.from({ length: 10 }, () => changeEvent(base)));
      const now = t.clock.now();
      const claimed = await t.container.db
        .transaction()
        .execute((trx) => claimDue(trx, dialect, { now, limit: 100, leaseUntil: now + 60_000, token: 'batch', lanes: 32, owner: 'test' }));
      expect(claimed).toHaveLength(20);
      // Another worker took one lease over meanwhile (its lease expired): its outcome must not be written.
      const lost = claimed[3]!;
      await t.container.db.updateTable('webhook_deliveries').set({ claim_token: 'other' }).where('id', '=', lost.id).execute();

      const counted = countingTransactions(t.container.db);
      const recorder = new AttemptRecorder({ db: counted.db, dialect, clock: t.clock, applyPolicy: async () => {} });
      await Promise.all(claimed.map((d) => recorder.record(d, 'batch', 1, success)));
      expect(counted.count()).toBe(1);

      const rows = await t.container.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'status', 'attempts', 'claim_token'])
        .where('webhook_id', 'in', hooks.map((h) => h.id))
        .execute();
      for (const row of rows) {
        if (Number(row.id) === lost.id) expect(row).toMatchObject({ status: 'pending', claim_token: 'other' });
        else expect(row).toMatchObject({ status: 'succeeded', attempts: 1, claim_token: null });
      }
      const logged = await t.container.db
        .selectFrom('webhook_attempts')
        .select('delivery_id')
        .where('delivery_id', 'in', claimed.map((d) => d.id))
        .execute();
      expect(logged.map((r) => Number(r.delivery_id)).sort((a, b) => a - b)).toEqual(
        claimed
          .map((d) => d.id)
          .filter((id) => id !== lost.id)
          .sort((a, b) => a - b),
      );
    } finally {
      await receiver.close();
    }
  });

  it('the started loop keeps each row in order across parallel lanes of several webhooks', async () => {
    const clock = new ManualClock(Date.now());
    const loop = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' }, { clock });
    const receiver = await new Receiver().start();
    try {
      const user = await createUser(loop);
      const base = await createBase(loop, user);
      receiver.reply = () => ({ status: 200, delayMs: Math.floor(Math.random() * 8) });
      const paths = ['/p1', '/p2', '/p3'];
      for (const p of paths) await createWebhook(loop, user, base, { url: receiver.url(p) });
      const rows = ['r1', 'r2', 'r3', 'r4', 'r5'].map((r) => r.padEnd(22, 'x'));
      const events = Array.from({ length: 6 }, (_, round) => rows.map((rowId) => changeEvent(base, { rowId, rowName: `${rowId}#${round}` }))).flat();
      loop.container.webhooks.deliverer.start();
      await emit(loop, events);
      const total = events.length * paths.length;
      for (let i = 0; i < 400 && receiver.received.length < total; i++) await new Promise((r) => setTimeout(r, 25));
      expect(receiver.received).toHaveLength(total);
      for (const p of paths) {
        for (const rowId of rows) {
          const sent = receiver.received.filter((r) => r.path === p).map((r) => JSON.parse(r.body).data).filter((d) => d.row_id === rowId);
          expect(sent.map((d) => d.row_name)).toEqual(events.filter((e) => e.rowId === rowId).map((e) => e.rowName));
        }
        expect(receiver.maxOpen.get(p)).toBeGreaterThan(1);
      }
    } finally {
      await loop.close();
      await receiver.close();
    }
  });
});

describe.each(DIALECTS)('a crash between sending and recording (%s)', (dialect) => {
  it('sends the delivery again after the restart, with the same webhook-id, and logs the recorded attempt', async () => {
    const shared = new SharedDatabase(dialect);
    const receiver = await new Receiver().start();
    try {
      await crashAndRestart(dialect, shared, receiver);
    } finally {
      await receiver.close();
      await shared.dispose();
    }
  });
});

async function crashAndRestart(dialect: DialectName, shared: SharedDatabase, receiver: Receiver): Promise<void> {
  const clock = new ManualClock();
  const open = async () => createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' }, { database: await shared.open(), clock });
  const first = await open();
  const owner = await createUser(first);
  const base = await createBase(first, owner);
  const hook = await createWebhook(first, owner, base, { url: receiver.url('/crash') });
  await emit(first, [changeEvent(base)]);
  // The outcome cannot be written (as if the process died before its batch committed).
  await sql`ALTER TABLE webhook_attempts RENAME TO webhook_attempts_away`.execute(first.container.db);
  await first.container.webhooks.deliverer.runOnce();
  await sql`ALTER TABLE webhook_attempts_away RENAME TO webhook_attempts`.execute(first.container.db);
  expect(receiver.received).toHaveLength(1);
  const held = await first.container.db.selectFrom('webhook_deliveries').select(['status', 'claim_token']).where('webhook_id', '=', hook.id).executeTakeFirstOrThrow();
  expect(held.status).toBe('pending');
  expect(held.claim_token).not.toBeNull(); // still leased: nobody else sends it while this process lives
  await first.close();

  // SQLite frees every lease at start; PostgreSQL takes over the lease of a worker silent for the stale time.
  clock.advance(HEARTBEAT_STALE_MS + 1);
  const second = await open();
  try {
    expect(await drain(second)).toBe(1);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    const delivery = await second.container.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', hook.id).executeTakeFirstOrThrow();
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1 });
    const attempts = await second.container.db.selectFrom('webhook_attempts').select(['attempt', 'outcome']).where('delivery_id', '=', delivery.id).execute();
    expect(attempts).toEqual([{ attempt: 1, outcome: 'success' }]);
  } finally {
    await second.close();
  }
}

/** Pauses the first query's result until `open()` is called. */
function gate(): { plugin: KyselyPlugin; open(): void; reached: Promise<void> } {
  let release!: () => void;
  let signal!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const reached = new Promise<void>((resolve) => (signal = resolve));
  let first = true;
  return {
    plugin: {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        if (first) {
          first = false;
          signal();
          await released;
        }
        return args.result;
      },
    },
    open: () => release(),
    reached,
  };
}

// The 242-vs-240 flake of "never send the same attempt twice": a worker that read who is alive before
// another worker's first heartbeat took that worker's fresh leases over, and both sent.
describe.each(DIALECTS.filter((d) => d === 'postgres'))('claims of two workers starting together (%s)', (dialect) => {
  it('a worker never takes over a lease of a worker that beat and claimed while it was claiming', async () => {
    const { t, owner } = await webhookApp(dialect);
    const receiver = await new Receiver().start();
    try {
      const base = await createBase(t, owner);
      await createWebhook(t, owner, base, { url: receiver.url('/race') });
      await emit(t, Array.from({ length: 4 }, () => changeEvent(base)));
      const now = t.clock.now();
      const input = (token: string) => ({ now, limit: 10, leaseUntil: now + 75_000, token, lanes: 32, owner: `worker-${token}`, staleBefore: now - HEARTBEAT_STALE_MS });

      // Worker B starts claiming and has read the list of live workers (A is not in it yet)…
      const paused = gate();
      const claimB = claimDue(t.container.db.withPlugin(paused.plugin), dialect, input('b'));
      await paused.reached;
      // …then A beats for the first time and claims everything…
      await beat(t.container.db, 'worker-a', now);
      const byA = await claimDue(t.container.db, dialect, input('a'));
      expect(byA).toHaveLength(4);
      // …and B goes on: A is alive, so B takes nothing.
      paused.open();
      expect(await claimB).toEqual([]);
      const tokens = await t.container.db.selectFrom('webhook_deliveries').select('claim_token').where('base_id', '=', base.id).execute();
      expect(tokens.map((r) => r.claim_token)).toEqual(['a', 'a', 'a', 'a']);
    } finally {
      await receiver.close();
      await t.close();
    }
  });
});
