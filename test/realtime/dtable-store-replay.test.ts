import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from '../http/rows.fixtures.js';
import { joined, listen, settle, waitFor, type LiveClient } from './live.support.js';

/*
 * The original's own consumer of `update-dtable` (dtable-store's Operation, which its DTableStore
 * applies to every remote operation) replays our messages onto a base loaded from the whole-base read,
 * and ends with the rows of a fresh read.
 */
const require = createRequire(import.meta.url);
const { Operation } = require('dtable-store') as { Operation: new (op: object) => { apply(value: object): object } };

type Row = Record<string, unknown> & { _id: string };
type Table = { _id: string; name: string; rows: Row[]; columns: Array<{ key: string }>; id_row_map?: Record<string, Row> };
type Dtable = { tables: Table[]; links?: unknown[] };

/** The whole-base read, prepared as dtable-store keeps a loaded base (rows indexed by id). */
async function load(g: Gateway): Promise<Dtable> {
  const res = await g.call('GET', '');
  expect(res.statusCode, res.body).toBe(200);
  const value = res.json<Dtable>();
  for (const table of value.tables) table.id_row_map = Object.fromEntries(table.rows.map((row) => [row._id, row]));
  value.links ??= [];
  return value;
}

/** Rows per table as comparable values: the time stamps are set by whoever applies an operation. */
function rowsOf(value: Dtable, dataKeys: (table: Table) => string[]) {
  return value.tables.map((table) => ({
    table: table._id,
    rows: table.rows.map((row) => Object.fromEntries([['_id', row._id], ...dataKeys(table).map((key) => [key, row[key] ?? null])])),
  }));
}

describe.each(DIALECTS)('dtable-store applies our update-dtable stream (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let live: LiveClient;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const url = await listen(t);
    t.container.dispatcher.start();
    g = await gateway(t);
    await addTable(g, 'Tasks', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Size', column_type: 'number' },
      { column_name: 'Stage', column_type: 'single-select', column_data: { options: [{ name: 'todo' }] } },
    ]);
    await appendRows(g, 'Tasks', [{ Title: 'loaded', Size: 1, Stage: 'todo' }]);
    live = await joined(url, g.base.uuid, g.token);
  });
  afterAll(async () => {
    live.close();
    await t.close();
  });

  it('ends with the same rows and columns as a fresh whole-base read', async () => {
    await settle(300);
    const start = live.messages('update-dtable').length;
    const value = await load(g);

    const ids = await appendRows(g, 'Tasks', [{ Title: 'a', Size: 2 }, { Title: 'b', Size: 3, Stage: 'doing' }, { Title: 'c' }]);
    expect((await g.call('PUT', 'rows/', { table_name: 'Tasks', updates: [{ row_id: ids[0], row: { Title: 'a2', Size: 20 } }, { row_id: ids[2], row: { Stage: 'todo' } }] })).statusCode).toBe(200);
    expect((await g.call('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [ids[1]] })).statusCode).toBe(200);
    expect((await g.call('POST', 'sql/', { sql: "INSERT INTO Tasks (Title, Size) VALUES ('by sql', 7)" })).statusCode).toBe(200);
    expect((await g.call('POST', 'sql/', { sql: "UPDATE Tasks SET Size = 8 WHERE Title = 'by sql'" })).statusCode).toBe(200);
    expect((await g.call('POST', 'columns/', { table_name: 'Tasks', column_name: 'Note', column_type: 'text' })).statusCode).toBe(200);
    await appendRows(g, 'Tasks', [{ Title: 'with note', Note: 'hello' }]);
    expect((await g.call('PUT', 'columns/', { table_name: 'Tasks', op_type: 'rename_column', column: 'Note', new_column_name: 'Remark' })).statusCode).toBe(200);
    await addTable(g, 'Later', [{ column_name: 'Label', column_type: 'text' }]);
    await appendRows(g, 'Later', [{ Label: 'in a new table' }]);
    await appendRows(g, 'Table1', [{ Name: 'default table' }]);

    const fresh = await load(g);
    const expectedCount = 3 + 2 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 1; // rows, updates, delete, sql, column, row, rename, table, rows
    await waitFor(() => live.messages('update-dtable').length >= start + expectedCount, 'every change');
    await settle(300);
    const ops = live.messages('update-dtable').slice(start) as object[];
    expect(ops).toHaveLength(expectedCount);

    let replayed: Dtable = value;
    for (const op of ops) replayed = new Operation(op).apply(replayed) as Dtable;

    const keysOf = (table: Table) => table.columns.map((c) => c.key);
    expect(replayed.tables.map((table) => ({ name: table.name, columns: table.columns.map((c) => c.key) }))).toEqual(
      fresh.tables.map((table) => ({ name: table.name, columns: table.columns.map((c) => c.key) })),
    );
    const freshKeys = new Map(fresh.tables.map((table) => [table._id, keysOf(table)]));
    expect(rowsOf(replayed, (table) => freshKeys.get(table._id)!)).toEqual(rowsOf(fresh, keysOf));
    expect(replayed.tables.find((table) => table.name === 'Tasks')!.columns.find((c) => (c as { name?: string }).name === 'Remark')).toBeDefined();
  });
});
