import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, listRows, type Gateway } from '../http/rows.fixtures.js';
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
type Link = { _id: string; table1_id: string; table2_id: string; table1_table2_map: Record<string, string[]>; table2_table1_map: Record<string, string[]> };
type Dtable = { tables: Table[]; links?: Link[] };
type LinkColumn = { link_id: string; table_id: string; other_table_id: string; table: string; column: string };

/** The whole-base read, prepared as dtable-store keeps a loaded base (rows indexed by id). */
async function load(g: Gateway): Promise<Dtable> {
  const res = await g.call('GET', '');
  expect(res.statusCode, res.body).toBe(200);
  const value = res.json<Dtable>();
  for (const table of value.tables) table.id_row_map = Object.fromEntries(table.rows.map((row) => [row._id, row]));
  value.links ??= [];
  return value;
}

/**
 * dtable-store keeps links apart from the rows (`links`: per link, both directions). Our whole-base read
 * has none, so the loaded base gets them from the row listing's link cells (table1 = the link's own table).
 */
async function linksOf(g: Gateway, link: LinkColumn): Promise<Link> {
  const forward: Record<string, string[]> = {};
  const backward: Record<string, string[]> = {};
  for (const row of await listRows(g, `table_name=${link.table}&convert_keys=true`)) {
    const others = ((row[link.column] as Array<{ row_id: string }> | undefined) ?? []).map((cell) => cell.row_id);
    if (others.length > 0) forward[row._id as string] = others;
    for (const other of others) (backward[other] ??= []).push(row._id as string);
  }
  return { _id: link.link_id, table1_id: link.table_id, table2_id: link.other_table_id, table1_table2_map: forward, table2_table1_map: backward };
}

/** A link's pairs, order aside. */
function pairsOf(link: Link | undefined): { forward: string[]; backward: string[] } {
  const flat = (map: Record<string, string[]>) => Object.entries(map).flatMap(([id, others]) => others.map((other) => `${id}>${other}`)).sort();
  return { forward: flat(link?.table1_table2_map ?? {}), backward: flat(link?.table2_table1_map ?? {}) };
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
    await addTable(g, 'People', [{ column_name: 'Name', column_type: 'text' }]);
    await appendRows(g, 'Tasks', [{ Title: 'loaded', Size: 1, Stage: 'todo' }, { Title: 'loaded too' }]);
    live = await joined(url, g.base.uuid, g.token);
  });
  afterAll(async () => {
    live.close();
    await t.close();
  });

  it('ends with the same rows, row order, columns and links as a fresh whole-base read', async () => {
    const column = await g.call('POST', 'columns/', { table_name: 'Tasks', column_name: 'Owner', column_type: 'link', column_data: { table: 'Tasks', other_table: 'People' } });
    expect(column.statusCode, column.body).toBe(200);
    const link: LinkColumn = { ...(column.json().data as { link_id: string; table_id: string; other_table_id: string }), table: 'Tasks', column: 'Owner' };
    const people = await appendRows(g, 'People', [{ Name: 'Ann' }, { Name: 'Bob' }, { Name: 'Cy' }]);
    // The stream counted below starts after the message of that append (under load it can come late).
    const peopleArrived = () =>
      (live.messages('update-dtable') as Array<{ op_type: string; row_datas?: Array<{ _id: string }> }>).some((m) => m.op_type === 'insert_rows' && m.row_datas?.some((r) => r._id === people[0]));
    await waitFor(peopleArrived, 'the People rows');
    await settle(300);
    const start = live.messages('update-dtable').length;
    const value = await load(g);
    value.links = [await linksOf(g, link)];

    const sent = async (method: string, path: string, body: object) => {
      const res = await g.call(method as 'POST', path, body);
      expect(res.statusCode, res.body).toBe(200);
    };
    // Batches (insert_rows below the table's last row, modify_rows, delete_rows) and single rows.
    const ids = await appendRows(g, 'Tasks', [{ Title: 'a', Size: 2 }, { Title: 'b', Size: 3, Stage: 'doing' }, { Title: 'c' }]);
    await sent('PUT', 'rows/', { table_name: 'Tasks', updates: [{ row_id: ids[0], row: { Title: 'a2', Size: 20 } }, { row_id: ids[2], row: { Stage: 'todo' } }] });
    await sent('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [ids[1]] });
    // The last row goes, then a row is appended: it lands below the row that is now last.
    const [last] = await appendRows(g, 'Tasks', [{ Title: 'last' }]);
    await sent('DELETE', 'rows/', { table_name: 'Tasks', row_ids: [last] });
    await appendRows(g, 'Tasks', [{ Title: 'after the last' }, { Title: 'and one more' }]);
    await sent('POST', 'sql/', { sql: "INSERT INTO Tasks (Title, Size) VALUES ('by sql', 7), ('by sql too', 8)" });
    await sent('POST', 'sql/', { sql: "UPDATE Tasks SET Size = 9 WHERE Title LIKE 'by sql%'" });
    await sent('POST', 'sql/', { sql: "DELETE FROM Tasks WHERE Title = 'by sql too'" });
    // Links: one pair (add_link), a batch (update_rows_links), one pair removed (remove_link), a linked row deleted.
    await sent('POST', 'links/', { link_id: link.link_id, table_name: 'Tasks', other_table_name: 'People', table_row_id: ids[0], other_table_row_id: people[0] });
    await sent('POST', 'links/', { link_id: link.link_id, table_name: 'Tasks', other_table_name: 'People', other_rows_ids_map: { [ids[0]!]: [people[1]!], [ids[2]!]: [people[0]!, people[2]!] } });
    await sent('DELETE', 'links/', { link_id: link.link_id, table_name: 'People', other_table_name: 'Tasks', table_row_id: people[0], other_table_row_id: ids[0] });
    await sent('DELETE', 'rows/', { table_name: 'People', row_ids: [people[2]] });
    // Structure.
    await sent('POST', 'columns/', { table_name: 'Tasks', column_name: 'Note', column_type: 'text' });
    await appendRows(g, 'Tasks', [{ Title: 'with note', Note: 'hello' }]);
    await sent('PUT', 'columns/', { table_name: 'Tasks', op_type: 'rename_column', column: 'Note', new_column_name: 'Remark' });
    await addTable(g, 'Later', [{ column_name: 'Label', column_type: 'text' }]);
    await appendRows(g, 'Later', [{ Label: 'in a new table' }, { Label: 'and a second row' }]);
    await appendRows(g, 'Table1', [{ Name: 'default table' }]);

    const fresh = await load(g);
    fresh.links = [await linksOf(g, link)];
    // One message per write: a new select option ('doing') and 3 rows, 2 updates, 1 delete, 1 row, 1 delete, 2 rows, SQL ×3, links ×3, a row delete,
    // a column, a row, a rename, a table, 2 rows, a row.
    const expectedCount = 20;
    await waitFor(() => live.messages('update-dtable').length >= start + expectedCount, 'every change');
    await settle(300);
    const ops = live.messages('update-dtable').slice(start) as Array<{ op_type: string }>;
    expect(ops.map((op) => op.op_type)).toEqual([
      'modify_column_data',
      'insert_rows',
      'modify_rows',
      'delete_row',
      'insert_row',
      'delete_row',
      'insert_rows',
      'insert_rows',
      'modify_rows',
      'delete_row',
      'add_link',
      'update_rows_links',
      'remove_link',
      'delete_row',
      'insert_column',
      'insert_row',
      'rename_column',
      'insert_table',
      'insert_rows',
      'insert_row',
    ]);

    let replayed: Dtable = value;
    for (const op of ops) replayed = new Operation(op).apply(replayed) as Dtable;

    const keysOf = (table: Table) => table.columns.map((c) => c.key);
    expect(replayed.tables.map((table) => ({ name: table.name, columns: table.columns.map((c) => c.key) }))).toEqual(
      fresh.tables.map((table) => ({ name: table.name, columns: table.columns.map((c) => c.key) })),
    );
    const freshKeys = new Map(fresh.tables.map((table) => [table._id, keysOf(table)]));
    // (Arrays: the row order is compared too.)
    expect(rowsOf(replayed, (table) => freshKeys.get(table._id)!)).toEqual(rowsOf(fresh, keysOf));
    expect(replayed.tables.find((table) => table.name === 'Tasks')!.columns.find((c) => (c as { name?: string }).name === 'Remark')).toBeDefined();
    const replayedLink = replayed.links!.find((l) => l._id === link.link_id);
    expect(pairsOf(replayedLink)).toEqual(pairsOf(fresh.links[0]));
    expect(pairsOf(replayedLink).forward.length).toBeGreaterThan(0);
  });
});
