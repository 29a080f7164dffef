import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipart } from '../helpers/asset-fixtures.js';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { appendRows, appWithTable, type Gateway } from './rows.fixtures.js';

/**
 * Counted position blocks (issue 34, position-blocks.ts, migration 0049): a deep jump into a table's
 * unfiltered listing sums whole blocks of 4,096 ids and counts only inside one. Every deep page answers
 * what the plain offset path answers, and the stored counts equal a fresh count of the table, before and
 * after every kind of write that changes which rows the table lists. Row ids are spread over several
 * blocks by advancing the id sequence between batches; "big" is lowered to 50 rows, a deep skip to 5.
 */
describe.each(DIALECTS)('counted position blocks follow every write (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let tableId: string;
  const indexes = () => t.container.baseData.indexes;
  const blocks = () => indexes().blocks;

  /** Later ids ~5,000 higher: the next rows fall in another block. */
  const skipIds = async () => {
    if (dialect === 'postgres') {
      await sql`select setval(pg_get_serial_sequence('base_rows', 'id'), nextval(pg_get_serial_sequence('base_rows', 'id')) + 5000)`.execute(t.container.db);
    } else {
      await sql`update sqlite_sequence set seq = seq + 5000 where name = 'base_rows'`.execute(t.container.db);
    }
  };
  const archive = async (rowId: string, on: boolean) => {
    const q =
      dialect === 'postgres'
        ? sql`update base_rows set data = data || ${JSON.stringify({ _archived: on })}::jsonb where base_id = ${g.base.id} and row_id = ${rowId}`
        : sql`update base_rows set data = json_set(data, '$._archived', json(${on ? 'true' : 'false'})) where base_id = ${g.base.id} and row_id = ${rowId}`;
    await q.execute(t.container.db);
  };
  const names = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ Name: `${tag} ${i}` }));
  let rowIds: string[] = [];

  /** A page with nothing known before it (page cache and remembered page ends dropped), with deep skips from `skip` rows. */
  const cold = async (start: number, limit: number, skip: number, warm = false) => {
    indexes().options.positionSkip = skip;
    t.container.baseData.snapshots.evict(g.base.id);
    if (!warm) t.container.baseData.rows.positions.clear();
    const res = await g.call('GET', `rows/?table_name=T&convert_keys=true&start=${start}&limit=${limit}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name);
  };
  const listedCount = async () => {
    const listed = dialect === 'postgres' ? sql`(data ->> '_archived') is distinct from 'true'` : sql`json_extract(data, '$._archived') is not 1`;
    const { rows } = await sql<{ block: number | string; n: number | string }>`select id >> 12 as block, count(*) as n from base_rows
      where base_id = ${g.base.id} and table_id = ${tableId} and ${listed} group by id >> 12 order by block`.execute(t.container.db);
    return new Map(rows.map((r) => [Number(r.block), Number(r.n)]));
  };
  /** Blocks built (a deep jump causes them), equal to a fresh count, and every deep page as the offset path has it. */
  const check = async () => {
    await cold(60, 1, 5);
    await indexes().idle();
    expect(blocks().has(g.base.id, tableId)).toBe(true);
    const fresh = await listedCount();
    expect(await blocks().countsOf(g.base.id, tableId)).toEqual(fresh);
    const total = [...fresh.values()].reduce((a, b) => a + b, 0);
    expect(fresh.size).toBeGreaterThan(2);
    for (let start = 0; start <= total + 2; start += 7) {
      const limit = start % 3 === 0 ? 9 : 4;
      expect(await cold(start, limit, 5), `start ${start}`).toEqual(await cold(start, limit, Number.MAX_SAFE_INTEGER));
    }
    // From a known page end (a row id inside some block) onwards: the rest of its block counted, then whole blocks.
    for (let start = 3; start <= total; start += 29) {
      const reference = await cold(start + 23, 5, Number.MAX_SAFE_INTEGER);
      await cold(start, 2, Number.MAX_SAFE_INTEGER);
      expect(await cold(start + 23, 5, 5, true), `start ${start} + 23`).toEqual(reference);
    }
  };

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect, { RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' }));
    const meta = (await g.call('GET', 'metadata/')).json<{ metadata: { tables: Array<{ _id: string; name: string }> } }>();
    tableId = meta.metadata.tables.find((x) => x.name === 'T')!._id;
    for (let i = 0; i < 4; i++) {
      rowIds.push(...(await appendRows(g, 'T', names(20, `b${i}`))));
      const res = await g.call('POST', 'add-archived-rows/', { table_name: 'T', rows: names(3, `archived b${i}`) });
      expect(res.statusCode, res.body).toBe(200);
      await skipIds();
    }
    indexes().options.minRows = 50;
  }, 120_000);
  afterAll(() => t.close());

  it('answers every deep page as the offset path, through blocks equal to a fresh count', async () => {
    await check();
  });

  it('after single inserts, deletes, archiving and unarchiving', async () => {
    rowIds.push(...(await appendRows(g, 'T', names(1, 'single'))));
    await skipIds();
    rowIds.push(...(await appendRows(g, 'T', names(1, 'single far'))));
    const gone = [rowIds[3]!, rowIds[25]!, rowIds[61]!];
    expect((await g.call('DELETE', 'rows/', { table_name: 'T', row_ids: gone })).statusCode).toBe(200);
    await archive(rowIds[10]!, true);
    await archive(rowIds[30]!, true);
    await archive(rowIds[30]!, false);
    await check();
    // The row trash gives a deleted row back.
    expect((await g.call('PUT', `trash/rows/${gone[1]}/`, {})).statusCode).toBe(200);
    await check();
  });

  it('after a batch append and an import', async () => {
    await skipIds();
    rowIds.push(...(await appendRows(g, 'T', names(150, 'batch'))));
    await check();
    const csv = ['Name', ...Array.from({ length: 40 }, (_, i) => `imported ${i}`)].join('\n');
    const body = multipart([
      { name: 'dtable_uuid', value: g.base.uuid },
      { name: 'table_name', value: 'T' },
      { name: 'file', value: csv, filename: 'rows.csv' },
    ]);
    const res = await t.request({ method: 'POST', url: `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-import/append-excel-csv-to-table/`, token: g.owner.token, ...body });
    expect(res.statusCode, res.body).toBe(200);
    await check();
  });

  it('after the table is deleted and restored (its blocks go with it and are built again)', async () => {
    expect((await g.call('DELETE', 'tables/', { table_name: 'T' })).statusCode).toBe(200);
    await indexes().idle();
    expect(blocks().has(g.base.id, tableId)).toBe(false);
    const trashed = (await g.call('GET', 'trash/tables/')).json().tables as Array<{ id: number; table_name: string }>;
    expect((await g.call('PUT', `trash/tables/${trashed.find((x) => x.table_name === 'T')!.id}/`, {})).statusCode).toBe(200);
    await check();
  });
});
