import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_COMMIT_LOCK, consumerPosition, eventHorizon, outboxPosition, type ChangeEvent } from '../../src/modules/events/index.js';
import { DIALECTS, SharedDatabase, createTestApp, type TestApp } from '../helpers/index.js';
import { appendRows, gateway, refuseEventsNamed, through, type Gateway } from './rows.fixtures.js';
import { createWebhook } from './webhooks-support.js';

/**
 * PG_CONCURRENT_APPENDS (issue 34 item 4, docs/architecture.md "Concurrent appends of one base"):
 * appends of one base commit side by side, so their event ids no longer become visible in id order.
 * Every consumer reads only up to the event horizon and must see every committed event exactly once,
 * in id order and per-row order: the dispatcher (webhooks, rules, automations run on it), a webhook's
 * start position (the outbox position), the change feed and the live channel's own catch-up. A read
 * sent after an append's answer sees it, on the other instance too, and a cached read (ETag) moves.
 */
describe.each(DIALECTS.filter((d) => d === 'postgres'))('concurrent appends of one base, PG_CONCURRENT_APPENDS (%s)', (dialect) => {
  const shared = new SharedDatabase(dialect);
  const env = { PG_CONCURRENT_APPENDS: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' };
  let first: TestApp;
  let second: TestApp;
  let here: Gateway;
  let there: Gateway;
  /** What the dispatcher's recorder was handed (webhooks, rules and automations are consumers of the same dispatcher). */
  const dispatched: ChangeEvent[] = [];
  /** The change feed's row changes read so far, and its cursor. */
  const fed: Array<{ event_id: number; row_id: string; op_type: string }> = [];
  let feedCursor = '';

  const drain = async () => {
    while ((await first.container.dispatcher.runOnce()).handed > 0);
    await first.container.realtime.consumer.catchUp();
  };
  const readFeed = async () => {
    for (let i = 0; i < 100; i++) {
      const res = await here.call('GET', `changes/?after=${encodeURIComponent(feedCursor)}&limit=50`);
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json<{ changes: Array<{ type: string; event_id: number; row_id: string; op_type: string }>; cursor: string; has_more: boolean }>();
      for (const c of page.changes) if (c.type === 'row') fed.push({ event_id: c.event_id, row_id: c.row_id, op_type: c.op_type });
      feedCursor = page.cursor;
      if (!page.has_more) return;
    }
    throw new Error('the change feed did not end');
  };
  /** The committed insert events of rows named `prefix…`, in id order. */
  const committed = async (prefix: string) =>
    (await first.container.db.selectFrom('events').select(['id', 'row_id', 'op_type']).where('base_id', '=', here.base.id).where('row_name', 'like', `${prefix}%`).orderBy('id').execute()).map((e) => ({
      id: Number(e.id),
      rowId: e.row_id,
      opType: e.op_type,
    }));
  const deliveredTo = async (webhookId: number) =>
    (await first.container.db.selectFrom('webhook_deliveries').select('event_id').where('webhook_id', '=', webhookId).execute()).map((d) => Number(d.event_id));
  /** Each consumer got each of `events` once, and everything it got is in id order. */
  const expectSeenOnce = (events: Array<{ id: number }>) => {
    for (const [name, seen] of [
      ['dispatcher', dispatched.map((e) => e.id)],
      ['change feed', fed.map((e) => e.event_id)],
    ] as const) {
      for (const e of events) expect(seen.filter((id) => id === e.id), `${name}: event ${e.id}`).toHaveLength(1);
      expect(seen, `${name} in id order`).toEqual([...seen].sort((a, b) => a - b));
    }
  };

  beforeAll(async () => {
    first = await createTestApp(dialect, env, { database: await shared.open() });
    second = await createTestApp(dialect, env, { database: await shared.open(), clock: first.clock });
    expect(first.container.baseData.writer.concurrentAppends).toBe(true);
    first.container.dispatcher.register({ name: 'concurrent-appends-recorder', handle: async (_trx, events) => void dispatched.push(...events) });
    here = await gateway(first);
    there = through(second, here);
    await appendRows(here, 'Table1', [{ Name: 'warm' }]);
    await appendRows(there, 'Table1', [{ Name: 'warm' }]);
    await drain();
    const start = await here.call('GET', 'changes/?after=now');
    feedCursor = start.json<{ cursor: string }>().cursor;
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await shared.dispose();
  });

  it('an append in flight below one that committed (and one rolled back) holds every consumer back until it commits: each sees every event once, in id order', async () => {
    const owner = here.owner;
    const before = await createWebhook(first, owner, here.base, { url: 'http://127.0.0.1:9/before' });
    const db = first.container.db;
    // The next id the sequence hands out is taken by an uncommitted row here: the append that draws
    // it stays in flight (waiting on this transaction) with its block's id lock held.
    // (The trigger that refuses an append's events is made first: CREATE TRIGGER waits for inserts in flight.)
    const allow = await refuseEventsNamed(db, dialect);
    const next = Number((await sql<{ n: string }>`SELECT last_value + 1 AS n FROM events_id_seq`.execute(db)).rows[0]!.n);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holder = db
      .transaction()
      .execute(async (trx) => {
        await sql`INSERT INTO events (id, base_id, base_uuid, table_id, table_name, row_id, row_name, op_type, op_user, op_app, op_time, row_data, row, created_at, write_id)
          VALUES (${next}, ${here.base.id}, ${here.base.uuid}, '0000', 'Table1', 'held', 'held', 'insert_row', 'test', NULL, 0, '{}', NULL, 0, NULL)`.execute(trx);
        await released;
        throw new Error('rolled back by the test');
      })
      .catch((e: Error) => {
        if (e.message !== 'rolled back by the test') throw e;
      });
    const slow = appendRows(here, 'Table1', [{ Name: 'slow' }]);
    let fast: { id: number } | undefined;
    let during: { id: number } | undefined;
    try {
      const idLocked = async () =>
        Number(
          (await sql<{ n: string }>`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND classid = ${0x7b << 24} AND objid = ${next}`.execute(db)).rows[0]!.n,
        );
      for (let i = 0; i < 400 && (await idLocked()) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await idLocked()).toBe(1);

      // A later append commits (through the other instance), and one rolls back after drawing its ids.
      const [fastId] = await appendRows(there, 'Table1', [{ Name: 'fast' }]);
      await expect(second.container.baseData.rows.append(here.base, { user: 'u@auth.local', app: null }, { table_name: 'Table1', rows: [{ Name: 'refused' }] })).rejects.toThrow(/refused by the test/);
      [fast] = await committed('fast');
      expect(fast!.id).toBeGreaterThan(next);

      // Read after write: the fast append's answer came; both instances list it.
      for (const g of [here, there]) {
        const page = await g.call('GET', 'rows/?table_name=Table1&limit=1000&convert_keys=true');
        expect(page.json<{ rows: Array<{ _id: string }> }>().rows.map((r) => r._id)).toContain(fastId);
      }
      // Consumers run while the slow append is in flight; a webhook made now starts below it.
      await drain();
      await readFeed();
      const position = Number((await db.selectNoFrom(outboxPosition(db).as('p')).executeTakeFirstOrThrow()).p);
      expect.soft(position, 'the outbox position').toBeLessThan(next);
      during = await createWebhook(first, owner, here.base, { url: 'http://127.0.0.1:9/during' });
      // The live channel acknowledges events of bases nobody watches without handing them over: its position stays below too.
      expect.soft(await consumerPosition(db, 'realtime'), 'the live channel').toBeLessThan(next);
      expect.soft(dispatched.map((e) => e.id), 'the dispatcher').not.toContain(fast!.id);
    } finally {
      release();
      await holder;
      await allow();
    }
    const [slowId] = await slow;
    const [slowEvent] = await committed('slow');
    expect(slowEvent!.id).toBe(next);
    expect(slowEvent!.rowId).toBe(slowId);
    await drain();
    await readFeed();

    expectSeenOnce([slowEvent!, fast!]);
    expect(await committed('refused')).toEqual([]);
    for (const hook of [before, during!]) {
      const delivered = await deliveredTo(hook.id);
      expect(delivered.filter((id) => id === slowEvent!.id), `webhook ${hook.id} gets the slow append`).toHaveLength(1);
    }
    expect((await deliveredTo(before.id)).filter((id) => id === fast!.id)).toHaveLength(1);
  }, 90_000);

  it('60 appends and 20 updates on two instances while the consumers run, some held in flight out of id order: every committed event once, in id order and per-row order; each writer reads its row at once on the other instance', async () => {
    const names = Array.from({ length: 60 }, (_, i) => `c${i}`);
    const db = first.container.db;
    let writing = true;
    // Out-of-order commits: a row taken (uncommitted) at the next id makes the append that draws that
    // id wait 300 ms, while the appends after it commit.
    let held = 0;
    const holding = (async () => {
      while (writing) {
        const taken = await db
          .transaction()
          .execute(async (trx) => {
            const inserted = await sql`INSERT INTO events (id, base_id, base_uuid, table_id, table_name, row_id, row_name, op_type, op_user, op_app, op_time, row_data, row, created_at, write_id)
              SELECT last_value + 1, ${here.base.id}, ${here.base.uuid}, '0000', 'Table1', 'held', 'held', 'insert_row', 'test', NULL, 0, '{}', NULL, 0, NULL FROM events_id_seq
              ON CONFLICT DO NOTHING`.execute(trx);
            if (Number(inserted.numAffectedRows ?? 0) === 0) return false;
            await new Promise((resolve) => setTimeout(resolve, 300));
            throw new Error('rolled back by the test');
          })
          .catch((e: Error) => e.message === 'rolled back by the test');
        if (taken) held++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const consuming = (async () => {
      while (writing) {
        await drain();
        await readFeed();
      }
    })();
    const statementsBefore = first.container.baseData.writer.batches.stats.statements;
    const ids = await Promise.all(
      names.map(async (name, i) => {
        const [g, other] = i % 2 === 0 ? [here, there] : [there, here];
        const [id] = await appendRows(g, 'Table1', [{ Name: name }]);
        const read = await other.call('GET', `rows/${id}/?table_name=Table1&convert_keys=true`);
        expect(read.statusCode, read.body).toBe(200);
        expect(read.json().Name).toBe(name);
        return id!;
      }),
    );
    // Updates of a third of the rows (serialized writers), concurrently with each other and the consumers.
    await Promise.all(
      ids.map(async (id, i) => {
        if (i % 3 !== 0) return;
        const updated = await (i % 2 === 0 ? here : there).call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: id, row: { Name: `${names[i]}u` } }] });
        expect(updated.statusCode, updated.body).toBe(200);
      }),
    );
    writing = false;
    await consuming;
    await holding;
    expect(held).toBeGreaterThan(0);
    await drain();
    await readFeed();

    const events = await committed('c');
    expect(events.filter((e) => e.opType === 'insert_row').map((e) => e.rowId).sort()).toEqual([...ids].sort());
    expect(events.filter((e) => e.opType === 'modify_row')).toHaveLength(20);
    expectSeenOnce(events);
    // Per-row order: a row's insert comes before its update, in every consumer.
    for (const seen of [dispatched.map((e) => ({ id: e.id, rowId: e.rowId, opType: e.opType })), fed.map((e) => ({ id: e.event_id, rowId: e.row_id, opType: e.op_type }))]) {
      for (const id of ids) {
        const ops = seen.filter((e) => e.rowId === id).map((e) => e.opType);
        expect(ops[0]).toBe('insert_row');
      }
    }
    expect(first.container.baseData.writer.batches.stats.statements).toBeGreaterThan(statementsBefore);
  }, 90_000);

  it('a cached read on the other instance moves with an append: its page lists the row and its ETag changes', async () => {
    const whole = await there.call('GET', '');
    expect(whole.statusCode).toBe(200);
    const etag = String(whole.headers.etag);
    expect((await there.call('GET', 'rows/?table_name=Table1&limit=1000&convert_keys=true')).statusCode).toBe(200);
    const [id] = await appendRows(here, 'Table1', [{ Name: 'cached' }]);
    const again = await second.request({ method: 'GET', url: there.url(''), token: there.token, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(200);
    expect(String(again.headers.etag)).not.toBe(etag);
    expect(again.body).toContain(id!);
    const page = await there.call('GET', 'rows/?table_name=Table1&limit=1000&convert_keys=true');
    expect(page.json<{ rows: Array<{ _id: string }> }>().rows.map((r) => r._id)).toContain(id);
  });

  it('the horizon stays below a block in flight while a serialized writer, of this schema or another one in the database, holds the commit lock', async () => {
    const db = first.container.db;
    let endBlock!: () => void;
    const blockDone = new Promise<void>((resolve) => (endBlock = resolve));
    let drawn!: (id: number) => void;
    const firstId = new Promise<number>((resolve) => (drawn = resolve));
    // A block of ids drawn in a transaction still open: an append in flight.
    const block = db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ id: string }>`select basegate_event_draw(2) as id`.execute(trx);
      drawn(Number(rows[0]!.id));
      await blockDone;
    });
    let endLock!: () => void;
    const lockDone = new Promise<void>((resolve) => (endLock = resolve));
    let lock: Promise<void> | undefined;
    try {
      const id = await firstId;
      // An append that commits above it.
      await appendRows(here, 'Table1', [{ Name: 'above the block' }]);
      expect(Math.max(...(await committed('above the block')).map((e) => e.id))).toBeGreaterThan(id);
      // The commit lock held exclusively, as a serialized writer holds it; the key is the same in every
      // schema of the database, so another schema's writer holds it alike and keeps no append of this one out.
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      lock = db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${EVENTS_COMMIT_LOCK})`.execute(trx);
        locked();
        await lockDone;
      });
      await isLocked;
      expect(await eventHorizon(db)).toBeLessThan(id);
    } finally {
      endLock();
      endBlock();
      await lock;
      await block;
    }
  }, 90_000);
});

describe.each(DIALECTS.filter((d) => d === 'sqlite'))('PG_CONCURRENT_APPENDS on %s', (dialect) => {
  it('is ignored: appends keep the one writer, and readers read up to the highest id', async () => {
    const t = await createTestApp(dialect, { PG_CONCURRENT_APPENDS: 'true' });
    try {
      expect(t.container.baseData.writer.concurrentAppends).toBe(false);
      const g = await gateway(t);
      await appendRows(g, 'Table1', [{ Name: 'one' }, { Name: 'two' }]);
      const last = Number((await t.container.db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow()).id);
      expect(await eventHorizon(t.container.db)).toBe(last);
    } finally {
      await t.close();
    }
  });
});
