import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

/**
 * Migration 0050 (PostgreSQL): inserted rows reach the jump sets through one statement trigger per
 * INSERT, not a trigger call per row (the per-row call cost a 10,000,000-row import about a third of its
 * database time), and the entries it writes are those the row trigger wrote.
 */
describe.each(DIALECTS.filter((d) => d === 'postgres'))('jump set entries of inserted rows, per statement (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  let keys: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Tasks', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Points', column_type: 'number' },
      { column_name: 'Kind', column_type: 'text' },
    ]);
    const table = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'Tasks');
    tableId = table._id;
    keys = Object.fromEntries(table.columns.map((c: { name: string; key: string }) => [c.name, c.key]));
    // Two sets of the table: sorted on Points filtered on Kind, and one keeping named cells (0047).
    await sql`insert into row_jump_defs (name, base_id, table_id, filter_key, filter_type, sort_key, sort_type, descending)
              values ('jk_one', ${g.base.id}, ${tableId}, ${keys.Kind}, 'text', ${keys.Points}, 'number', false)`.execute(t.container.db);
    await sql`insert into row_jump_defs (name, base_id, table_id, sort_key, sort_type, descending, cells)
              values ('jk_many', ${g.base.id}, ${tableId}, ${keys.Name}, 'text', true, ${sql.raw(`ARRAY['${keys.Name}', '${keys.Kind}']`)})`.execute(t.container.db);
  }, 60_000);
  afterAll(() => t?.close());

  it('one append writes every set entry of its rows, as the row trigger did', async () => {
    await appendRows(g, 'Tasks', [{ Name: 'a', Points: 3, Kind: 'x' }, { Name: 'b', Kind: 'y' }, { Points: 7 }]);
    const entries = await sql<{ name: string; row_id: string; num: number | null; txt: string | null; data: unknown }>`
      select d.name, r.row_id, k.num, k.txt, k.data from row_jump_keys k join row_jump_defs d on d.id = k.jump_id
        join base_rows r on r.id = k.id where d.base_id = ${g.base.id} order by d.name, r.id`.execute(t.container.db);
    expect(entries.rows.map(({ row_id: _, ...e }) => e)).toEqual([
      { name: 'jk_many', num: null, txt: 'a', data: { [keys.Name!]: 'a', [keys.Kind!]: 'x' } },
      { name: 'jk_many', num: null, txt: 'b', data: { [keys.Name!]: 'b', [keys.Kind!]: 'y' } },
      { name: 'jk_many', num: null, txt: null, data: {} },
      { name: 'jk_one', num: 3, txt: null, data: { [keys.Kind!]: 'x' } },
      { name: 'jk_one', num: null, txt: null, data: { [keys.Kind!]: 'y' } },
      { name: 'jk_one', num: 7, txt: null, data: {} },
    ]);
  });

  it('a multi-row INSERT calls the jump trigger once, not once per row; archived rows get no entry', async () => {
    const calls = await t.container.db.transaction().execute(async (trx) => {
      await sql`set local track_functions = 'pl'`.execute(trx);
      await sql`insert into base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier)
                select ${g.base.id}, ${tableId}, 'jk' || g, jsonb_build_object(${keys.Points}::text, g, '_archived', g = 50), 0, 0, 'u', 'u'
                from generate_series(1, 50) g`.execute(trx);
      const counted = await sql<{ per_row: string | null; per_statement: string | null; entries: string }>`
        select pg_stat_get_xact_function_calls('base_rows_jump_keys'::regproc) as per_row,
               pg_stat_get_xact_function_calls('base_rows_jump_keys_inserted'::regproc) as per_statement,
               (select count(*) from row_jump_keys k join base_rows r on r.id = k.id where r.row_id like 'jk%') as entries`.execute(trx);
      return counted.rows[0]!;
    });
    // Two sets × 49 rows (the archived one is left out, as the row trigger did).
    expect({ perRow: Number(calls.per_row ?? 0), perStatement: Number(calls.per_statement), entries: Number(calls.entries) }).toEqual({ perRow: 0, perStatement: 1, entries: 98 });
  });
});
