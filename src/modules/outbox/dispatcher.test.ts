import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, createTestDatabase } from '../../../test/helpers/db.js';
import { migrateToLatest, type DbHandle, type Executor } from '../../db/index.js';
import { ManualClock } from '../../shared/clock.js';
import { appendEvents, consumerPosition, type BatchContext, type ChangeEvent, type NewChangeEvent, type OutboxConsumer, type PartialBatch } from '../events/index.js';
import { Dispatcher } from './index.js';

/** A consumer that records what it was handed; `react` decides the answer per batch. */
class Recorder implements OutboxConsumer {
  readonly batches: number[][] = [];
  react: (trx: Executor, events: ChangeEvent[], context?: BatchContext) => Promise<void | PartialBatch> = async () => undefined;

  constructor(
    readonly name: string,
    readonly options: OutboxConsumer['options'] = {},
    private readonly bases: number[] | null = null,
  ) {}

  get basesOfInterest() {
    const bases = this.bases;
    return bases ? async (_trx: Executor, ids: number[]) => ids.filter((id) => bases.includes(id)) : undefined;
  }

  handle(trx: Executor, events: ChangeEvent[], context?: BatchContext): Promise<void | PartialBatch> {
    this.batches.push(events.map((event) => event.id));
    return this.react(trx, events, context);
  }

  get handed(): number[] {
    return this.batches.flat();
  }
}

let counter = 0;
function event(baseId = 1): NewChangeEvent {
  counter++;
  return {
    baseId,
    baseUuid: `base-${baseId}`,
    tableId: '0000',
    tableName: 'Table1',
    rowId: `row${counter}`,
    rowName: `Row ${counter}`,
    opType: 'modify_row',
    opUser: 'someone@auth.local',
    opApp: null,
    opTime: 1_767_607_200_000,
    rowData: [{ column_key: '0000', column_name: 'Name', column_type: 'text', column_data: null, value: `v${counter}`, old_value: null }],
    row: { _id: `row${counter}`, '0000': `v${counter}` },
  };
}

describe.each(DIALECTS)('the outbox dispatcher (%s)', (dialect) => {
  let handle: DbHandle;
  const clock = new ManualClock();

  beforeEach(async () => {
    handle = await createTestDatabase(dialect);
    await migrateToLatest(handle.db);
  });
  afterEach(() => handle.close());

  /** Commit `events` through the outbox; returns their ids, in order. */
  async function commit(events: NewChangeEvent[]): Promise<number[]> {
    const before = (await handle.db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())?.id ?? 0;
    await handle.db.transaction().execute((trx) => appendEvents(trx, dialect, events, clock.now()));
    const rows = await handle.db.selectFrom('events').select('id').where('id', '>', Number(before)).orderBy('id').execute();
    return rows.map((row) => Number(row.id));
  }

  it('hands every consumer the events in id order, in batches of at most its own batch size, and keeps its position', async () => {
    const ids = await commit([event(), event(), event(), event(), event()]);
    const dispatcher = new Dispatcher(handle.db, dialect, clock, { batchSize: 3 });
    const small = new Recorder('small', { batchSize: 2 });
    const large = new Recorder('large', { batchSize: 100 });
    dispatcher.register(small);
    dispatcher.register(large);
    expect(dispatcher.consumerNames()).toEqual(['small', 'large']);
    const report = await dispatcher.runOnce();
    expect(report).toEqual({ handed: 10, failed: [] });
    expect(small.batches).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
    // The dispatcher's own batch size caps a consumer's larger one.
    expect(large.batches).toEqual([ids.slice(0, 3), ids.slice(3)]);
    expect(await consumerPosition(handle.db, 'small')).toBe(ids[4]);
    expect(await consumerPosition(handle.db, 'large')).toBe(ids[4]);
    // Nothing new: nothing handed again.
    expect((await dispatcher.runOnce()).handed).toBe(0);
    expect(small.handed).toEqual(ids);
  });

  it('gives a consumer that acknowledges part of a batch the rest in the next one, each event once', async () => {
    const ids = await commit([event(), event(), event(), event(), event()]);
    const dispatcher = new Dispatcher(handle.db, dialect, clock);
    const partial = new Recorder('partial');
    // Two events per transaction, whatever the batch.
    partial.react = async (_trx, events) => (events.length > 2 ? { through: events[1]!.id } : undefined);
    dispatcher.register(partial);
    const report = await dispatcher.runOnce();
    expect(report.failed).toEqual([]);
    expect(partial.batches).toEqual([ids, ids.slice(2), ids.slice(4)]);
    expect(await consumerPosition(handle.db, 'partial')).toBe(ids[4]);
  });

  it('refuses an acknowledgement through an id outside the batch: the consumer fails and its position stays', async () => {
    const ids = await commit([event(), event()]);
    const dispatcher = new Dispatcher(handle.db, dialect, clock);
    const wrong = new Recorder('wrong');
    wrong.react = async () => ({ through: ids[1]! + 1000 });
    dispatcher.register(wrong);
    const report = await dispatcher.runOnce();
    expect(report.failed.map((f) => f.consumer)).toEqual(['wrong']);
    expect(String(report.failed[0]!.error)).toMatch(/not an event of its batch/);
    expect(await consumerPosition(handle.db, 'wrong')).toBe(0);
  });

  it('runs afterRollback, not afterCommit, when handle throws, and hands the same events over again', async () => {
    const ids = await commit([event(), event()]);
    const dispatcher = new Dispatcher(handle.db, dialect, clock);
    const flaky = new Recorder('flaky');
    const calls: string[] = [];
    flaky.react = async (_trx, _events, context) => {
      context!.afterCommit(() => calls.push('commit'));
      context!.afterRollback!(() => calls.push('rollback'));
      if (flaky.batches.length === 1) throw new Error('receiver database away');
    };
    const other = new Recorder('other');
    dispatcher.register(flaky);
    dispatcher.register(other);
    const first = await dispatcher.runOnce();
    expect(first.failed.map((f) => f.consumer)).toEqual(['flaky']);
    // One consumer's failure does not hold back the others.
    expect(other.handed).toEqual(ids);
    expect(calls).toEqual(['rollback']);
    expect(await consumerPosition(handle.db, 'flaky')).toBe(0);
    expect((await dispatcher.runOnce()).failed).toEqual([]);
    expect(flaky.batches).toEqual([ids, ids]);
    expect(calls).toEqual(['rollback', 'commit']);
  });

  it('acknowledges events of bases a consumer does not listen to without handing them over', async () => {
    const ids = await commit([event(1), event(2), event(1), event(3)]);
    const dispatcher = new Dispatcher(handle.db, dialect, clock);
    const onlyTwo = new Recorder('only-two', {}, [2]);
    dispatcher.register(onlyTwo);
    expect((await dispatcher.runOnce()).handed).toBe(4);
    expect(onlyTwo.handed).toEqual([ids[1]]);
    expect(await consumerPosition(handle.db, 'only-two')).toBe(ids[3]);
  });

  it('lets other work on the event loop run between batches', async () => {
    await commit([event(), event(), event()]);
    const dispatcher = new Dispatcher(handle.db, dialect, clock);
    const slow = new Recorder('slow', { batchSize: 1 });
    let macrotaskRan = false;
    const seen: boolean[] = [];
    slow.react = async () => {
      seen.push(macrotaskRan);
    };
    dispatcher.register(slow);
    const run = dispatcher.runOnce();
    setImmediate(() => (macrotaskRan = true));
    await run;
    // The first batch may run before the callback; a later one must not.
    expect(seen).toHaveLength(3);
    expect(seen[2]).toBe(true);
  });

  it('lets a catch-up-first consumer catch up on a commit made while a later consumer runs, before the next one', async () => {
    const [first] = await commit([event()]);
    const dispatcher = new Dispatcher(handle.db, dialect, clock, { pollIntervalMs: 60_000 });
    const urgent = new Recorder('urgent', { catchUpFirst: true });
    const middle = new Recorder('middle');
    const last = new Recorder('last');
    const order: string[] = [];
    let second = 0;
    urgent.react = async () => void order.push('urgent');
    last.react = async () => void order.push('last');
    middle.react = async (trx) => {
      order.push('middle');
      if (middle.batches.length > 1) return;
      // A write commits (here: in this transaction) while the run is past the urgent consumer.
      await appendEvents(trx, dialect, [event()], clock.now());
      second = Number((await trx.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow()).id);
      dispatcher.wake();
    };
    dispatcher.register(urgent);
    dispatcher.register(middle);
    dispatcher.register(last);
    dispatcher.start();
    try {
      for (let i = 0; i < 500 && last.handed.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    } finally {
      await dispatcher.stop();
    }
    expect(urgent.batches).toEqual([[first], [second]]);
    expect(order.slice(0, 4)).toEqual(['urgent', 'middle', 'urgent', 'last']);
    expect(last.handed).toEqual([first, second]);
  });
});
