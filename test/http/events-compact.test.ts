import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { advanceConsumer, appendEvents, ensureConsumer, eventsAfter, outboxPosition, pruneEvents, type NewChangeEvent } from '../../src/modules/events/index.js';
import { DATA_CELLS, ROW_CELLS } from '../../src/modules/events/event-cells.js';
import { loadMetadata, type StoredRow } from '../../src/modules/rows/index.js';
import { insertEvents } from '../../src/modules/rows/row-events.js';
import { sql } from 'kysely';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

/**
 * Insert events are stored with their cells once (in `row`, columns per write in `event_columns`):
 * what the outbox hands back must be exactly what it was given, as when each event carried its cells.
 */
describe.each(DIALECTS)('compactly stored insert events (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  /** The events of each write as the writer emitted them (before storage). */
  const emitted: NewChangeEvent[][] = [];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    const table = await addTable(g, 'Items', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Size', column_type: 'number' },
      { column_name: 'Stage', column_type: 'single-select', column_data: { options: [{ name: 'todo' }] } },
      { column_name: 'Tags', column_type: 'multiple-select', column_data: { options: [{ name: 'x' }, { name: 'y' }] } },
      { column_name: 'Due', column_type: 'date' },
      { column_name: 'Done', column_type: 'checkbox' },
      { column_name: 'No', column_type: 'auto-number' },
    ]);
    tableId = table._id;
    t.container.baseData.writer.beforeCommit(async (_trx, events) => {
      emitted.push(events);
    });
  });
  afterAll(() => t.close());

  const position = async () => Number((await t.container.db.selectNoFrom(outboxPosition(t.container.db).as('p')).executeTakeFirstOrThrow()).p);
  /** What the outbox returned before: each event's JSON stored and parsed back. */
  // `links` and `origin` are for the writer's in-transaction hooks only and are never stored.
  const asStoredInFull = (events: NewChangeEvent[]) => events.map(({ links: _l, origin: _o, ...e }) => JSON.parse(JSON.stringify(e)) as NewChangeEvent);
  const withoutIds = <T extends { id?: number; writeId?: string | null }>(events: T[]) => events.map(({ id: _id, writeId: _w, ...rest }) => rest);
  const columnsCount = async () => Number((await t.container.db.selectFrom('event_columns').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  it('reads an appended batch back exactly as emitted, stored once per cell', async () => {
    const from = await position();
    emitted.length = 0;
    await appendRows(g, 'Items', [
      { Title: 'one', Size: 1.5, Stage: 'todo', Tags: ['x', 'y'], Due: '2026-03-01', Done: true },
      { Title: 'two', Stage: 'new option', Tags: ['y'] },
      { Size: 0, Done: false, Title: null },
      {},
    ]);
    const read = await eventsAfter(t.container.db, from, 100);
    expect(read.map((e) => e.opType)).toEqual(['insert_row', 'insert_row', 'insert_row', 'insert_row']);
    expect(emitted).toHaveLength(1);
    expect(withoutIds(read)).toEqual(asStoredInFull(emitted[0]!));
    expect(read[1]!.rowData.find((c) => c.column_name === 'Stage')!.column_data).toMatchObject({ options: [{ name: 'todo' }, { name: 'new option' }] });
    expect(read[0]!.rowData.map((c) => c.column_name)).toEqual(['Title', 'Size', 'Stage', 'Tags', 'Due', 'Done', 'No'].filter((n) => read[0]!.rowData.some((c) => c.column_name === n)));
    // Stored compactly: the marker instead of the cells, the row's cells alone in `row` (the same text
    // as the row's own), one columns row for the write.
    const stored = await t.container.db.selectFrom('events').select(['row_data', 'write_id', 'row', 'row_id']).where('id', '>', from).execute();
    expect(stored.map((s) => s.row_data)).toEqual([DATA_CELLS, DATA_CELLS, DATA_CELLS, DATA_CELLS]);
    const own = await t.container.db.selectFrom('base_rows').select(['row_id', 'data']).where('row_id', '=', stored[0]!.row_id).executeTakeFirstOrThrow();
    expect(JSON.parse(stored[0]!.row!)).toEqual(typeof own.data === 'string' ? JSON.parse(own.data) : own.data);
    const cols = await t.container.db.selectFrom('event_columns').selectAll().where('write_id', '=', stored[0]!.write_id!).execute();
    expect(cols.map((c) => c.table_id)).toEqual([tableId]);
    // The row and the cells are separate objects, as when both were parsed from their own JSON.
    const tags = read[0]!.rowData.find((c) => c.column_name === 'Tags')!;
    (tags.value as string[]).push('changed');
    expect(Object.values(read[0]!.row!).some((v) => Array.isArray(v) && v.includes('changed'))).toBe(false);
  });

  it('keeps other events (and old stored insert events) in full', async () => {
    const [id] = await appendRows(g, 'Items', [{ Title: 'to change', Size: 1 }]);
    const from = await position();
    emitted.length = 0;
    expect((await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: id, row: { Size: 2 } }] })).statusCode).toBe(200);
    expect((await g.call('DELETE', 'rows/', { table_name: 'Items', row_ids: [id] })).statusCode).toBe(200);
    // An insert event as stored before compaction existed (no declared columns): read as written.
    const [legacy] = emitted[0]!.map((e) => ({ ...e, opType: 'insert_row' as const, row: { _id: e.rowId, x: 1 } }));
    await t.container.db.transaction().execute((trx) => appendEvents(trx, dialect, [legacy!], 5));
    const read = await eventsAfter(t.container.db, from, 100);
    expect(withoutIds(read)).toEqual(asStoredInFull([...emitted.flat(), legacy!]));
    const stored = await t.container.db.selectFrom('events').select('row_data').where('id', '>', from).execute();
    for (const s of stored) expect(s.row_data.startsWith('[')).toBe(true);
  });

  const newRow = (id: string, data: Record<string, unknown>, extra: Partial<StoredRow> = {}): StoredRow => ({ _id: id.padEnd(22, 'A'), _ctime: 7, _mtime: 7, _creator: 'u', _last_modifier: 'u', data, ...extra });
  const storedForms = async (from: number) => (await t.container.db.selectFrom('events').select('row_data').where('id', '>', from).orderBy('id').execute()).map((r) => (r.row_data.startsWith('[') ? 'full' : r.row_data));

  it('stores an event in full when its cells are not its row (the declaration is checked)', async () => {
    const meta = await loadMetadata(t.container.db, g.base.id);
    const table = meta.tables.find((x) => x._id === tableId)!;
    const key = table.columns[0]!.key;
    const rows = [newRow('C1', { [key]: 'a' }), newRow('C2', { [key]: 'b' }), newRow('C3', { [key]: 'c' })];
    const events = insertEvents({ id: g.base.id, uuid: g.base.uuid }, table, rows, { user: 'u', app: null }, 7);
    events[1]!.row = { ...events[1]!.row!, [key]: 'not the cell' };
    const from = await position();
    await t.container.db.transaction().execute((trx) => appendEvents(trx, dialect, events, 7));
    expect(await storedForms(from)).toEqual([DATA_CELLS, 'full', DATA_CELLS]);
    expect(withoutIds(await eventsAfter(t.container.db, from, 10))).toEqual(asStoredInFull(events));
  });

  it('stores a lone insert event in full (its columns row would cost what it saves)', async () => {
    const from = await position();
    emitted.length = 0;
    await appendRows(g, 'Items', [{ Title: 'alone', Size: 3 }]);
    expect(await storedForms(from)).toEqual(['full']);
    expect(withoutIds(await eventsAfter(t.container.db, from, 10))).toEqual(asStoredInFull(emitted[0]!));
  });

  it('keeps the whole row when it is not the plain new-row shape (cells still stored once)', async () => {
    const meta = await loadMetadata(t.container.db, g.base.id);
    const table = meta.tables.find((x) => x._id === tableId)!;
    const key = table.columns[1]!.key;
    const rows = [newRow('D1', { [key]: 3 }, { _creator: 'someone else', _ctime: 1 }), newRow('D2', { [key]: 4 })];
    const events = insertEvents({ id: g.base.id, uuid: g.base.uuid }, table, rows, { user: 'u', app: 'app' }, 7);
    const from = await position();
    await t.container.db.transaction().execute((trx) => appendEvents(trx, dialect, events, 7));
    expect(await storedForms(from)).toEqual([ROW_CELLS, DATA_CELLS]);
    expect(withoutIds(await eventsAfter(t.container.db, from, 10))).toEqual(asStoredInFull(events));
  });

  it('writes a batch larger than one INSERT chunk whole, in order', async () => {
    const meta = await loadMetadata(t.container.db, g.base.id);
    const table = meta.tables.find((x) => x._id === tableId)!;
    const [title, size] = table.columns;
    const rows: StoredRow[] = Array.from({ length: 2_500 }, (_, i) => ({
      _id: `R${String(i).padStart(21, '0')}`,
      _ctime: 9,
      _mtime: 9,
      _creator: 'u',
      _last_modifier: 'u',
      data: i % 7 === 0 ? { [size!.key]: i } : { [title!.key]: `row ${i}`, [size!.key]: i },
    }));
    const events = insertEvents({ id: g.base.id, uuid: g.base.uuid }, table, rows, { user: 'u', app: null }, 9);
    const from = await position();
    await t.container.db.transaction().execute((trx) => appendEvents(trx, dialect, events, 9));
    const read = await eventsAfter(t.container.db, from, 5_000);
    expect(read).toHaveLength(2_500);
    expect(withoutIds(read)).toEqual(asStoredInFull(events));
    expect(new Set(read.map((e) => e.writeId)).size).toBe(1);
  });

  it('writes nothing when a row in the middle of a batch is invalid', async () => {
    const from = await position();
    const columnsBefore = await columnsCount();
    const rowsBefore = Number((await sql<{ n: number }>`select count(*) as n from base_rows where base_id = ${g.base.id}`.execute(t.container.db)).rows[0]!.n);
    const rows = Array.from({ length: 1000 }, (_, i) => ({ Title: `r${i}`, Size: i === 500 ? 'not a number' : i }));
    const res = await g.call('POST', 'rows/', { table_name: 'Items', rows });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Row 501');
    expect(await position()).toBe(from);
    expect(await columnsCount()).toBe(columnsBefore);
    expect(Number((await sql<{ n: number }>`select count(*) as n from base_rows where base_id = ${g.base.id}`.execute(t.container.db)).rows[0]!.n)).toBe(rowsBefore);
  });

  it('prunes a write’s columns only with the last of its events', async () => {
    const from = await position();
    await appendRows(g, 'Items', [{ Title: 'p1' }, { Title: 'p2' }, { Title: 'p3' }]);
    const [first] = await eventsAfter(t.container.db, from, 1);
    await ensureConsumer(t.container.db, 'compact-probe', 0);
    // Only the first event of the write is acknowledged (and old enough): the others still need the columns.
    await advanceConsumer(t.container.db, 'compact-probe', first!.id, 0);
    await pruneEvents(t.container.db, ['compact-probe'], Number.MAX_SAFE_INTEGER);
    const rest = await eventsAfter(t.container.db, from, 10);
    expect(rest.map((e) => e.row!['_id'])).toHaveLength(2);
    expect(rest[0]!.rowData[0]).toMatchObject({ column_name: 'Title', value: 'p2', old_value: null });
    await advanceConsumer(t.container.db, 'compact-probe', await position(), 0);
    await pruneEvents(t.container.db, ['compact-probe'], Number.MAX_SAFE_INTEGER);
    expect(await columnsCount()).toBe(0);
  });
});
