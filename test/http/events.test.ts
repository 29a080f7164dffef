import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createContainer, type Container } from '../../src/container.js';
import { migrateToLatest, type Executor } from '../../src/db/index.js';
import { appendEvents, type ChangeEvent, type OutboxConsumer } from '../../src/modules/events/index.js';
import { ManualClock } from '../../src/shared/clock.js';
import { DIALECTS, SharedDatabase, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, apiTokenBaseToken, appendRows, gateway, type Gateway } from './rows.fixtures.js';

/** A consumer that records what it is handed; `failNext` makes the next call throw after writing. */
class Recorder implements OutboxConsumer {
  seen: ChangeEvent[] = [];
  calls = 0;
  failNext = false;
  constructor(readonly name: string) {}
  async handle(trx: Executor, events: ChangeEvent[]): Promise<void> {
    this.calls += 1;
    if (this.failNext) {
      this.failNext = false;
      // a side effect in the consumer's transaction that must roll back with it
      await trx.insertInto('event_consumers').values({ name: `side-effect-${this.name}`, last_event_id: 0, updated_at: 0 }).execute();
      throw new Error('consumer failed');
    }
    this.seen.push(...events);
  }
}

describe.each(DIALECTS)('change events (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let recorder: Recorder;
  let keys: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    recorder = new Recorder('recorder');
    t.container.dispatcher.register(recorder);
    g = await gateway(t);
    const table = await addTable(g, 'Tasks', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Size', column_type: 'number' },
      { column_name: 'Stage', column_type: 'single-select', column_data: { options: [{ name: 'todo' }] } },
    ]);
    keys = Object.fromEntries(table.columns.map((c) => [c.name, c.key]));
    await t.container.dispatcher.runOnce();
    recorder.seen = [];
  });
  afterAll(() => t.close());

  const drain = async () => {
    await t.container.dispatcher.runOnce();
    const seen = recorder.seen;
    recorder.seen = [];
    return seen;
  };

  /**
   * Run the consumers until every registered one has acknowledged the event named `rowName`. On
   * PostgreSQL one run may stop short of it: the event horizon also stays below appends in flight in
   * other schemas of the test database (the block locks' keys are database-wide).
   */
  const drainPast = async (rowName: string) => {
    const { id } = await t.container.db.selectFrom('events').select('id').where('row_name', '=', rowName).executeTakeFirstOrThrow();
    const names = t.container.dispatcher.consumerNames();
    await vi.waitFor(
      async () => {
        await t.container.dispatcher.runOnce();
        const positions = await t.container.db.selectFrom('event_consumers').select('last_event_id').where('name', 'in', names).execute();
        expect(positions).toHaveLength(names.length);
        for (const p of positions) expect(Number(p.last_event_id)).toBeGreaterThanOrEqual(Number(id));
      },
      { timeout: 10_000, interval: 50 },
    );
    recorder.seen = [];
  };

  it('writes one insert_row event per appended row with its cells and the full row', async () => {
    const [a, b] = await appendRows(g, 'Tasks', [{ Title: 'write docs', Size: 3 }, { Title: 'ship' }]);
    const events = await drain();
    expect(events.map((e) => [e.opType, e.rowId])).toEqual([
      ['insert_row', a],
      ['insert_row', b],
    ]);
    const [first] = events;
    expect(first).toMatchObject({
      baseId: g.base.id,
      baseUuid: g.base.uuid,
      tableName: 'Tasks',
      rowName: 'write docs',
      opUser: g.owner.virtualId,
      opApp: null,
      opTime: t.clock.now(),
    });
    expect(first!.rowData).toEqual([
      { column_key: keys.Title, column_name: 'Title', column_type: 'text', column_data: null, value: 'write docs', old_value: null },
      { column_key: keys.Size, column_name: 'Size', column_type: 'number', column_data: expect.objectContaining({ format: 'number' }), value: 3, old_value: null },
    ]);
    expect(first!.row).toMatchObject({ _id: a, [keys.Title!]: 'write docs', [keys.Size!]: 3, _creator: g.owner.virtualId });
    expect(events[0]!.id).toBeLessThan(events[1]!.id);
  });

  it('writes modify_row with only the changed cells, old and new values', async () => {
    const [id] = await appendRows(g, 'Tasks', [{ Title: 'a', Size: 1, Stage: 'todo' }]);
    await drain();
    t.clock.advance(5000);
    await g.call('PUT', 'rows/', { table_name: 'Tasks', updates: [{ row_id: id, row: { Size: 2, Stage: 'todo', Title: 'a' } }] });
    const [event, ...rest] = await drain();
    expect(rest).toEqual([]);
    expect(event).toMatchObject({ opType: 'modify_row', rowId: id, rowName: 'a', opTime: t.clock.now() });
    expect(event!.rowData).toEqual([{ column_key: keys.Size, column_name: 'Size', column_type: 'number', column_data: expect.anything(), value: 2, old_value: 1 }]);
    expect(event!.row).toMatchObject({ [keys.Size!]: 2, [keys.Stage!]: 'todo' });
  });

  it('writes delete_row with the cells as old values and no row', async () => {
    const [id] = await appendRows(g, 'Tasks', [{ Title: 'gone', Size: 9 }]);
    await drain();
    await g.call('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [id] });
    const [event] = await drain();
    expect(event).toMatchObject({ opType: 'delete_row', rowId: id, rowName: 'gone', row: null });
    expect(event!.rowData.map((c) => [c.column_name, c.value, c.old_value])).toEqual([
      ['Title', null, 'gone'],
      ['Size', null, 9],
    ]);
  });

  it('names the API-Token app as op_user and op_app', async () => {
    const token = await apiTokenBaseToken(g, 'sync-bot');
    await g.call('POST', 'rows/', { table_name: 'Tasks', rows: [{ Title: 'from app' }] }, token);
    const [event] = await drain();
    expect(event).toMatchObject({ opUser: 'sync-bot', opApp: 'sync-bot' });
  });

  it('writes no event for a refused batch', async () => {
    const res = await g.call('POST', 'rows/', { table_name: 'Tasks', rows: [{ Title: 'x' }, { Size: 'bad' }] });
    expect(res.statusCode).toBe(400);
    expect(await drain()).toEqual([]);
  });

  it('hands each event once; a failing consumer keeps its events and rolls back its writes', async () => {
    await appendRows(g, 'Tasks', [{ Title: 'r1' }, { Title: 'r2' }]);
    recorder.failNext = true;
    const report = await t.container.dispatcher.runOnce();
    expect(report.failed.map((f) => f.consumer)).toEqual(['recorder']);
    expect(recorder.seen).toEqual([]);
    const sideEffect = await t.container.db.selectFrom('event_consumers').selectAll().where('name', '=', 'side-effect-recorder').execute();
    expect(sideEffect).toEqual([]);
    const retried = await drain();
    expect(retried.map((e) => e.rowName)).toEqual(['r1', 'r2']);
    expect(await drain()).toEqual([]);
  });

  it('keeps progress per consumer: a consumer registered later sees the retained history', async () => {
    const late = new Recorder('late');
    t.container.dispatcher.register(late);
    await t.container.dispatcher.runOnce();
    const all = await t.container.db.selectFrom('events').select('id').orderBy('id').execute();
    expect(late.seen.map((e) => e.id)).toEqual(all.map((e) => Number(e.id)));
    expect(() => t.container.dispatcher.register(new Recorder('late'))).toThrow(/already registered/);
  });

  it('delivers after a commit when started, without runOnce', async () => {
    t.container.dispatcher.start();
    try {
      await appendRows(g, 'Tasks', [{ Title: 'woken' }]);
      await vi.waitFor(() => expect(recorder.seen.map((e) => e.rowName)).toContain('woken'), { timeout: 5000, interval: 20 });
    } finally {
      await t.container.dispatcher.stop();
      recorder.seen = [];
    }
  });

  it('prunes only acknowledged events older than the retention', async () => {
    await appendRows(g, 'Tasks', [{ Title: 'old' }]);
    await drainPast('old');
    t.clock.advance(2 * 24 * 3600_000);
    await appendRows(g, 'Tasks', [{ Title: 'pending' }]);
    const pruned = await t.container.dispatcher.prune(24 * 3600_000);
    expect(pruned).toBeGreaterThan(0);
    const left = await t.container.db.selectFrom('events').select('row_name').execute();
    expect(left.map((r) => r.row_name)).toEqual(['pending']);
    expect((await drain()).map((e) => e.rowName)).toEqual(['pending']);
  });
});

describe.each(DIALECTS)('dispatcher across restarts (%s)', (dialect) => {
  let shared: SharedDatabase;
  const clock = new ManualClock();
  const config = loadConfig(
    { SECRET_KEY: 'test-secret-key-test-secret-key-0123456789', DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-ev-')), LOG_LEVEL: 'silent' },
    { persistSecret: false },
  );
  const boot = async (...consumers: OutboxConsumer[]): Promise<Container> => {
    const c = createContainer(config, { clock, database: await shared.open() });
    await migrateToLatest(c.db);
    for (const consumer of consumers) c.dispatcher.register(consumer);
    return c;
  };

  beforeAll(async () => {
    shared = new SharedDatabase(dialect);
  });
  afterAll(() => shared.dispose());

  it('loses nothing committed before a restart and re-sends nothing acknowledged', async () => {
    const first = await boot(new Recorder('durable'));
    const user = await first.accounts.createUser({ email: `u${randomBytes(3).toString('hex')}@example.com`, password: 'password-123' });
    const base = await first.bases.create(user, { name: 'restart' });
    const actor = { user: user.virtualId, app: null };
    await first.baseData.rows.append(base, actor, { table_name: 'Table1', rows: [{ Name: 'one' }, { Name: 'two' }] });
    const acked = new Recorder('acked');
    first.dispatcher.register(acked);
    await first.dispatcher.runOnce(); // both consumers acknowledge one and two
    await first.baseData.rows.append(base, actor, { table_name: 'Table1', rows: [{ Name: 'three' }] });
    await first.close(); // "crash" after commit, before dispatch

    const durable = new Recorder('durable');
    const ackedAgain = new Recorder('acked');
    const second = await boot(durable, ackedAgain);
    await second.dispatcher.runOnce();
    expect(ackedAgain.seen.map((e) => e.rowName)).toEqual(['three']);
    expect(durable.seen.map((e) => e.rowName)).toEqual(['three']);
    await second.close();
  });

  // Ids are taken at insert but become visible at commit: a later id must never be seen first.
  if (dialect === 'postgres') it('makes events visible in id order even when transactions commit out of order', async () => {
    const c = await boot();
    const recorder = new Recorder('ordering');
    c.dispatcher.register(recorder);
    await c.dispatcher.runOnce();
    const event = (name: string) => ({
      baseId: 1, baseUuid: 'u', tableId: 't', tableName: 'T', rowId: name, rowName: name, opType: 'insert_row' as const,
      opUser: 'x', opApp: null, opTime: 0, rowData: [], row: null,
    });
    const first = await c.db.startTransaction().execute();
    await appendEvents(first, 'postgres', [event('first')], 0);
    let secondDone = false;
    const second = c.db.transaction().execute(async (trx) => {
      await appendEvents(trx, 'postgres', [event('second')], 0);
    }).then(() => { secondDone = true; });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(secondDone).toBe(false); // waits for the first writer's commit
    await c.dispatcher.runOnce();
    await first.commit().execute();
    await second;
    await c.dispatcher.runOnce();
    expect(recorder.seen.filter((e) => e.baseUuid === 'u').map((e) => e.rowName)).toEqual(['first', 'second']);
    await c.close();
  });

  // Only PostgreSQL runs several instances on one database (SQLite is single-process by design).
  if (dialect === 'postgres') it('two instances never hand the same event to one consumer twice', async () => {
    const handed: ChangeEvent[] = [];
    const counting = (): OutboxConsumer => ({ name: 'shared', handle: async (_trx, events) => void handed.push(...events) });
    const a = await boot(counting());
    const b = await boot(counting());
    const user = await a.accounts.createUser({ email: `v${randomBytes(3).toString('hex')}@example.com`, password: 'password-123' });
    const base = await a.bases.create(user, { name: 'two-instances' });
    const actor = { user: user.virtualId, app: null };
    for (let i = 0; i < 5; i++) {
      await a.baseData.rows.append(base, actor, { table_name: 'Table1', rows: Array.from({ length: 20 }, (_, j) => ({ Name: `${i}-${j}` })) });
      await Promise.all([a.dispatcher.runOnce(), b.dispatcher.runOnce(), a.dispatcher.runOnce(), b.dispatcher.runOnce()]);
    }
    await Promise.all([a.dispatcher.runOnce(), b.dispatcher.runOnce()]);
    const all = handed.map((e) => e.id);
    expect(new Set(all).size).toBe(all.length);
    const seen = handed.filter((e) => e.baseId === base.id).map((e) => e.id);
    expect(seen).toHaveLength(100);
    expect(new Set(seen).size).toBe(100);
    expect(seen).toEqual([...seen].sort((x, y) => x - y));
    await a.close();
    await b.close();
  });
});
