import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from '../http/rows.fixtures.js';
import { joined, listen, settle, waitFor, type LiveClient } from '../realtime/live.support.js';

/*
 * Dates in live operations (issue #12 item 3): with TIME_ZONE=Europe/Berlin the original's dtable-store,
 * replaying our update-dtable stream onto a whole-base read, ends with the date cells of a fresh read
 * (the operations carry dates as the whole-base read presents them).
 */
const require = createRequire(import.meta.url);
const { Operation } = require('dtable-store') as { Operation: new (op: object) => { apply(value: object): object } };

type Row = Record<string, unknown> & { _id: string };
type Table = { _id: string; name: string; rows: Row[]; columns: Array<{ key: string; name: string }>; id_row_map?: Record<string, Row> };
type Dtable = { tables: Table[]; links?: unknown[] };

async function load(g: Gateway): Promise<Dtable> {
  const res = await g.call('GET', '');
  expect(res.statusCode, res.body).toBe(200);
  const value = res.json<Dtable>();
  for (const table of value.tables) table.id_row_map = Object.fromEntries(table.rows.map((row) => [row._id, row]));
  value.links ??= [];
  return value;
}

describe.each(DIALECTS)('live operations carry dates as the whole-base read shows them (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let live: LiveClient;

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: 'Europe/Berlin' });
    const url = await listen(t);
    t.container.dispatcher.start();
    g = await gateway(t);
    await addTable(g, 'Plan', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Day', column_type: 'date' },
      { column_name: 'At', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm' } },
    ]);
    expect((await g.call('POST', 'columns/', { table_name: 'Plan', column_name: 'Next', column_type: 'formula', column_data: { formula: 'dateAdd({Day}, 1, "days")' } })).statusCode).toBe(200);
    await appendRows(g, 'Plan', [{ Title: 'loaded', Day: '2030-01-15', At: '2030-06-20 23:55' }]);
    live = await joined(url, g.base.uuid, g.token);
  });
  afterAll(async () => {
    live?.close();
    await t?.close();
  });

  it('a replayed base has the date cells of a fresh read', async () => {
    await settle(300);
    const start = live.messages('update-dtable').length;
    const value = await load(g);
    const ids = await appendRows(g, 'Plan', [
      { Title: 'summer', Day: '2030-06-20', At: '2030-06-20T21:55:00Z' },
      { Title: 'winter', Day: '2030-12-31', At: '2030-12-31 23:59' },
    ]);
    expect((await g.call('PUT', 'rows/', { table_name: 'Plan', updates: [{ row_id: ids[0], row: { At: '2030-10-27 01:30', Day: '2030-03-31' } }] })).statusCode).toBe(200);
    expect((await g.call('DELETE', 'rows/', { table_name: 'Plan', row_ids: [ids[1]] })).statusCode).toBe(200);
    const fresh = await load(g);
    await waitFor(() => live.messages('update-dtable').length >= start + 3, 'every change');
    await settle(300);
    const ops = live.messages('update-dtable').slice(start) as object[];
    // The two-row append is one insert_rows, as the original sends a batch.
    expect(ops.map((op) => (op as { op_type: string }).op_type)).toEqual(['insert_rows', 'modify_row', 'delete_row']);

    let replayed: Dtable = value;
    for (const op of ops) replayed = new Operation(op).apply(replayed) as Dtable;

    const plan = (d: Dtable) => d.tables.find((x) => x.name === 'Plan')!;
    const keys = plan(fresh).columns.map((c) => c.key);
    const cells = (d: Dtable) => plan(d).rows.map((row) => Object.fromEntries([['_id', row._id], ...keys.map((k) => [k, row[k] ?? null])]));
    expect(cells(replayed)).toEqual(cells(fresh));
    const at = plan(fresh).columns.find((c) => c.name === 'At')!.key;
    expect(plan(fresh).rows.map((r) => r[at])).toEqual(['2030-06-20T23:55:00+02:00', '2030-10-27T01:30:00+02:00']);
  });
});
