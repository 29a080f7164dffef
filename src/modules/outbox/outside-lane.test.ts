import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, createTestDatabase } from '../../../test/helpers/db.js';
import { migrateToLatest, type DbHandle, type Executor } from '../../db/index.js';
import { ManualClock } from '../../shared/clock.js';
import { appendEvents, consumerPosition, type ChangeEvent, type NewChangeEvent, type OutboxConsumer } from '../events/index.js';
import { Dispatcher } from './index.js';

function event(n: number): NewChangeEvent {
  return {
    baseId: 1,
    baseUuid: 'base-1',
    tableId: '0000',
    tableName: 'Table1',
    rowId: `row${n}`,
    rowName: `Row ${n}`,
    opType: 'modify_row',
    opUser: 'someone@auth.local',
    opApp: null,
    opTime: 1_767_607_200_000,
    rowData: [],
    row: { _id: `row${n}` },
  };
}

/** An `outside` consumer whose every call waits until the test lets it go (a slow or hung broker). */
class Broker implements OutboxConsumer {
  readonly options = { outside: true };
  readonly handed: number[] = [];
  calls = 0;
  fail: Error | null = null;
  private gate: { promise: Promise<void>; open: () => void } | null = null;
  constructor(readonly name: string) {}

  hold(): void {
    let open!: () => void;
    this.gate = { promise: new Promise<void>((r) => (open = r)), open };
  }

  release(): void {
    this.gate?.open();
    this.gate = null;
  }

  async handle(_db: Executor, events: ChangeEvent[]): Promise<void> {
    this.calls++;
    if (this.gate) await this.gate.promise;
    if (this.fail) throw this.fail;
    this.handed.push(...events.map((e) => e.id));
  }
}

class Recorder implements OutboxConsumer {
  readonly handed: number[] = [];
  constructor(readonly name: string) {}
  async handle(_trx: Executor, events: ChangeEvent[]): Promise<void> {
    this.handed.push(...events.map((e) => e.id));
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.each(DIALECTS)('outside consumers of the outbox (%s)', (dialect) => {
  let handle: DbHandle;
  const clock = new ManualClock();

  beforeEach(async () => {
    handle = await createTestDatabase(dialect);
    await migrateToLatest(handle.db);
  });
  afterEach(() => handle.close());

  const commit = (events: NewChangeEvent[]) => handle.db.transaction().execute((trx) => appendEvents(trx, dialect, events, clock.now()));

  it('a hung outside consumer holds back neither the other consumers nor the next commits', async () => {
    const dispatcher = new Dispatcher(handle.db, dialect, clock, { pollIntervalMs: 50 });
    const broker = new Broker('broker');
    const recorder = new Recorder('recorder');
    dispatcher.register(broker);
    dispatcher.register(recorder);
    broker.hold();
    await commit([event(1), event(2)]);
    dispatcher.start();
    try {
      await until(() => recorder.handed.length === 2 && broker.calls === 1, 'the first batch');
      await commit([event(3)]);
      dispatcher.wake();
      await until(() => recorder.handed.length === 3, 'the recorder to get the next commit while the broker hangs');
      expect(broker.handed).toEqual([]);
      expect(await consumerPosition(handle.db, 'broker')).toBe(0);
      broker.release();
      await until(() => broker.handed.length === 3, 'the broker to catch up once released');
      await until(async () => (await consumerPosition(handle.db, 'broker')) === 3, "the broker's position");
    } finally {
      broker.release();
      await dispatcher.stop();
    }
  });

  it('after a failure it rests (no call per commit), then catches up; a position moved meanwhile is not overwritten', async () => {
    const dispatcher = new Dispatcher(handle.db, dialect, clock, { outsideMinBackoffMs: 300, outsideMaxBackoffMs: 300 });
    const broker = new Broker('broker');
    dispatcher.register(broker);
    await commit([event(1)]);
    broker.fail = new Error('broker away');
    const failed = await dispatcher.runOnce();
    expect(failed.failed.map((f) => f.consumer)).toEqual(['broker']);
    await commit([event(2)]);
    const resting = await dispatcher.runOnce();
    expect(resting.failed).toEqual([]);
    expect(broker.calls).toBe(1);
    broker.fail = null;
    await new Promise((r) => setTimeout(r, 400));
    expect((await dispatcher.runOnce()).handed).toBe(2);
    expect(broker.handed).toEqual([1, 2]);

    // Another instance advanced the position while this one waited on the broker: it stands.
    await commit([event(3)]);
    broker.hold();
    const run = dispatcher.runOnce();
    await until(() => broker.calls === 3, 'the held call');
    await handle.db.updateTable('event_consumers').set({ last_event_id: 3 }).where('name', '=', 'broker').execute();
    broker.release();
    expect((await run).handed).toBe(0);
    expect(await consumerPosition(handle.db, 'broker')).toBe(3);
  });
});
