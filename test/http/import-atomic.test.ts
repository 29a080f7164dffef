import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { multipart } from '../helpers/asset-fixtures.js';
import { eventsOfBaseAfter } from '../../src/modules/events/index.js';
import { addTable, appendRows, eventCount, gateway, listRows, storedRowCount, type Gateway } from './rows.fixtures.js';

const csv = (from: number, count: number) =>
  ['Name,Points', ...Array.from({ length: count }, (_, i) => `task ${from + i},${from + i}`)].join('\n');

/**
 * An import is all or nothing: a failure at a late batch (injected inside the batch's own transaction,
 * after its rows are written, as a full disk would surface) leaves no row, table or event of it, and
 * while an import runs no consumer sees any of its events.
 */
describe.each(DIALECTS)('import all or nothing (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  /** Set to a row name: the write transaction whose events carry that row fails like a full disk. */
  let failAt: string | null = null;
  /** Outbox sizes seen inside the import's batch transactions. */
  let seenDuring: number[] = [];
  const outbox = async () => Number((await t.container.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const held = async () => {
    let n = 0;
    for (const table of ['held_events', 'held_event_batches', 'held_event_columns', 'held_updates'] as const) {
      n += Number((await t.container.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    }
    return n;
  };
  const structureEvents = async () =>
    Number((await t.container.db.selectFrom('structure_events').select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', '=', g.base.id).executeTakeFirstOrThrow()).n);
  const tables = async () => (await g.call('GET', 'metadata/')).json().metadata.tables.map((x: { name: string }) => x.name) as string[];
  const send = (op: string, name: string, content: string, fields: Record<string, string> = {}) => {
    const body = multipart([
      ...Object.entries({ dtable_uuid: g.base.uuid, ...fields }).map(([n, value]) => ({ name: n, value })),
      { name: 'file', value: content, filename: name },
    ]);
    return t.request({ method: 'POST', url: `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-import/${op}/`, token: g.owner.token, ...body });
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    t.container.baseData.writer.beforeCommit(async (trx, events) => {
      if (!events.some((e) => e.rowName.startsWith('task '))) return;
      seenDuring.push(Number((await trx.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n));
      if (failAt !== null && events.some((e) => e.rowName === failAt)) {
        throw Object.assign(new Error('database or disk is full'), dialect === 'postgres' ? { code: '53100' } : { code: 'SQLITE_FULL' });
      }
    });
  }, 60_000);
  afterAll(() => t?.close());

  it('publishes the events only when every batch is in, in write order', async () => {
    seenDuring = [];
    const before = await outbox();
    const res = await send('import-excel-csv-to-table', 'first.csv', csv(0, 2500));
    expect(res.statusCode, res.body).toBe(200);
    // Three batches ran; none of them saw an event of the import in the outbox.
    expect(seenDuring).toEqual([before, before, before]);
    expect((await outbox()) - before).toBe(2500);
    expect(await held()).toBe(0);
    const names = await t.container.db.selectFrom('events').select('row_name').where('base_id', '=', g.base.id).where('op_type', '=', 'insert_row').orderBy('id').execute();
    expect(names.slice(-2500).map((r) => r.row_name)).toEqual(Array.from({ length: 2500 }, (_, i) => `task ${i}`));
    expect((await listRows(g, 'table_name=first&limit=1&start=2499&convert_keys=true'))[0]).toMatchObject({ Name: 'task 2499', Points: 2499 });
    // The released events read back as consumers get them: each its row and cells, each batch its own write.
    const lastId = Number((await t.container.db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow()).id);
    const released = await eventsOfBaseAfter(t.container.db, g.base.id, lastId - 2500, 2500);
    const rows = await listRows(g, 'table_name=first&limit=1000');
    expect(released).toHaveLength(2500);
    expect(new Set(released.map((e) => e.writeId)).size).toBe(3);
    expect(released[0]).toMatchObject({ opType: 'insert_row', tableName: 'first', rowId: rows[0]!._id, rowName: 'task 0' });
    expect(released[0]!.row).toMatchObject({ _id: rows[0]!._id, _creator: released[0]!.opUser });
    expect(released[0]!.rowData.map((c) => [c.column_name, c.value, c.old_value])).toEqual([
      ['Name', 'task 0', null],
      ['Points', 0, null],
    ]);
    expect(released[2499]!.rowData.map((c) => c.value)).toEqual(['task 2499', 2499]);
  }, 60_000);

  it('a new table: a failure in the last batch leaves no table, row or event', async () => {
    const [names, rows, events, structure] = [await tables(), await storedRowCount(g), await outbox(), await structureEvents()];
    failAt = 'task 2400';
    const res = await send('import-excel-csv-to-table', 'late.csv', csv(0, 2500));
    failAt = null;
    expect(res.statusCode, res.body).toBe(507);
    expect(res.json().error_msg).toMatch(/no space left/);
    expect(await tables()).toEqual(names);
    expect(await storedRowCount(g)).toBe(rows);
    expect(await outbox()).toBe(events);
    // The table was staged, never in the metadata: not even a structure event of it was written.
    expect(await structureEvents()).toBe(structure);
    expect(await held()).toBe(0);
    expect(await t.container.db.selectFrom('import_jobs').selectAll().execute()).toEqual([]);
  }, 60_000);

  it('an append: a failure in the last batch removes the batches before it', async () => {
    await addTable(g, 'Tasks', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Points', column_type: 'number' },
    ]);
    await appendRows(g, 'Tasks', [{ Name: 'kept', Points: 1 }]);
    const [rows, events] = [await storedRowCount(g), await eventCount(g)];
    failAt = 'task 2100';
    const res = await send('append-excel-csv-to-table', 'more.csv', csv(0, 2500), { table_name: 'Tasks' });
    failAt = null;
    expect(res.statusCode, res.body).toBe(507);
    expect(await storedRowCount(g)).toBe(rows);
    expect(await eventCount(g)).toBe(events);
    expect(await held()).toBe(0);
    expect((await listRows(g, 'table_name=Tasks&convert_keys=true')).map((r) => r.Name)).toEqual(['kept']);
  }, 60_000);

  it('an update by key: a failure in the last batch puts the updated cells back and removes the appended rows', async () => {
    await addTable(g, 'Keyed', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Points', column_type: 'number' },
    ]);
    for (let i = 0; i < 1500; i += 1000) {
      await appendRows(g, 'Keyed', Array.from({ length: Math.min(1000, 1500 - i) }, (_, j) => ({ Name: `task ${i + j}`, Points: -(i + j) })));
    }
    await appendRows(g, 'Keyed', [{ Name: 'task 1499' }]); // a second row of one key: both stay as they were
    const [rows, events] = [await storedRowCount(g), await eventCount(g)];
    failAt = 'task 2200';
    // Rows 0–1499 update (batch 1 and half of 2), 1500–2499 append (the rest); the third batch fails.
    const res = await send('update-table-via-excel-csv', 'upd.csv', csv(0, 2500), { table_name: 'Keyed', selected_columns: 'Name' });
    failAt = null;
    expect(res.statusCode, res.body).toBe(507);
    expect(await storedRowCount(g)).toBe(rows);
    expect(await eventCount(g)).toBe(events);
    expect(await held()).toBe(0);
    const after = await listRows(g, 'table_name=Keyed&limit=1000&start=1000&convert_keys=true');
    expect(after.map((r) => [r.Name, r.Points ?? null])).toEqual([
      ...Array.from({ length: 500 }, (_, j) => [`task ${1000 + j}`, -(1000 + j)]),
      ['task 1499', null],
    ]);
    expect((await listRows(g, 'table_name=Keyed&limit=3&convert_keys=true')).map((r) => r.Points)).toEqual([0, -1, -2]);
  }, 60_000);
});
