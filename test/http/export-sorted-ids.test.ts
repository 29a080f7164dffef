import { sql, type KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sortedRowIds } from '../../src/modules/rows/rows.repository.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

/**
 * A sorted view's export reads the listing's ids in its order first (RowsService.scan). Issue 34: at
 * 10,000,000 rows one result holding every id as a row object is gigabytes, so the ids come from the
 * database a chunk at a time (SQLite: a streamed statement; PostgreSQL: a cursor) — never one result
 * with more rows than the chunk.
 */
describe.each(DIALECTS)('sorted row ids read in chunks (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  const ROWS = 1_500;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    tableId = (await addTable(g, 'Tasks', [{ column_name: 'Title', column_type: 'text' }, { column_name: 'Points', column_type: 'number' }]))._id;
    // Points descending by insertion, with ties (i % 500), so the order is neither the ids' nor unique.
    const rows = Array.from({ length: ROWS }, (_, i) => ({ Title: `task ${i}`, Points: i % 500 }));
    for (let i = 0; i < rows.length; i += 1000) await appendRows(g, 'Tasks', rows.slice(i, i + 1000));
  }, 120_000);

  afterAll(() => t?.close());

  it('answers every id in the order, with no result of more than one chunk', async () => {
    const results: number[] = [];
    const counting: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        results.push(args.result.rows.length);
        return args.result;
      },
    };
    const db = t.container.db;
    const meta = await t.container.baseData.writer.read({ id: g.base.id, uuid: g.base.uuid });
    const points = meta.tables.find((table) => table._id === tableId)!.columns.find((c) => c.name === 'Points')!.key;
    const value = dialect === 'postgres' ? sql`(base_rows.data->>${points})::float8` : sql`json_extract(base_rows.data, ${`$."${points}"`})`;
    const ids = await sortedRowIds(db.withPlugin(counting), dialect, { baseId: g.base.id, tableId, orderBy: [sql`${value} desc`] }, 100);

    const { rows } = await sql<{ id: number | string }>`select id from base_rows where base_id = ${g.base.id} and table_id = ${tableId} order by ${value} desc, id`.execute(db);
    expect(Array.from(ids)).toEqual(rows.map((r) => Number(r.id)));
    expect(ids).toHaveLength(ROWS);
    // Chunks of at most 100 rows: a result with all 1,500 ids (as before) fails this.
    expect(Math.max(...results)).toBeLessThanOrEqual(100);
    expect(results.reduce((a, b) => a + b, 0)).toBe(ROWS);
  });
});
