import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { multipart } from '../helpers/asset-fixtures.js';
import { gateway, type Gateway } from './rows.fixtures.js';

/**
 * Issue 34: a page deep in a freshly imported big table read the whole table until the first deep jump
 * had built the table's position index (24 s for a page 100 rows before the end of 10,000,000 rows on
 * PostgreSQL). On PostgreSQL an import now has its big tables' position indexes and counted blocks built
 * in the background right after it (RowIndexes.noteBulkWrite); SQLite, whose build holds the one writer,
 * waits for the first deep jump as before. "Big" is lowered to 100 rows.
 */
describe.each(DIALECTS)('an import builds its big tables’ position indexes (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;

  beforeAll(async () => {
    t = await createTestApp(dialect, { RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' });
    t.container.baseData.indexes.options.minRows = 100;
    g = await gateway(t);
  });
  afterAll(() => t?.close());

  const csv = (from: number, to: number) => ['Name,N', ...Array.from({ length: to - from }, (_, i) => `row ${from + i},${from + i}`)].join('\n');
  const importCsv = async (path: string, fields: Array<{ name: string; value: string; filename?: string }>) => {
    const body = multipart([{ name: 'dtable_uuid', value: g.base.uuid }, ...fields]);
    const res = await t.request({ method: 'POST', url: `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-import/${path}/`, token: g.owner.token, ...body });
    expect(res.statusCode, res.body).toBe(200);
  };
  const tableId = async (name: string) => {
    const meta = (await g.call('GET', 'metadata/')).json<{ metadata: { tables: Array<{ _id: string; name: string }> } }>();
    return meta.metadata.tables.find((x) => x.name === name)!._id;
  };
  const names = async (query: string) => {
    const res = await g.call('GET', `rows/?table_name=Big&convert_keys=true&${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name);
  };

  it('a new big table gets its position index and blocks after the import, a small one none', async () => {
    const { indexes } = t.container.baseData;
    await importCsv('import-excel-csv-to-table', [{ name: 'file', value: csv(0, 50), filename: 'Small.csv' }]);
    await importCsv('import-excel-csv-to-table', [{ name: 'file', value: csv(0, 300), filename: 'Big.csv' }]);
    await indexes.idle();
    const [big, small] = [await tableId('Big'), await tableId('Small')];
    expect(indexes.positionIndex(g.base.id, small)).toBeUndefined();
    if (dialect === 'postgres') {
      expect(indexes.positionIndex(g.base.id, big)).toBeDefined();
      expect(indexes.blocks.has(g.base.id, big)).toBe(true);
    } else {
      expect(indexes.positionIndex(g.base.id, big)).toBeUndefined();
    }
    // A deep page answers what the first pages hold there, through the blocks or not.
    indexes.options.positionSkip = 50;
    const reference = (await names('start=0&limit=300')).slice(250, 260);
    t.container.baseData.snapshots.evict(g.base.id);
    t.container.baseData.rows.positions.clear();
    expect(await names('start=250&limit=10')).toEqual(reference);
  });

  it('a new big table also gets the filter indexes of its first number and date columns (PostgreSQL): a first filter reads them, with the same answer', async () => {
    const { indexes } = t.container.baseData;
    indexes.options.bulkFilterColumns = 2;
    const head = 'Name,Label,N,Due,M,Extra';
    const lines = Array.from({ length: 300 }, (_, i) => `row ${i},l${i % 7},${i},2026-0${(i % 9) + 1}-1${i % 10},${300 - i},${i * 2}`);
    await importCsv('import-excel-csv-to-table', [{ name: 'file', value: [head, ...lines].join('\n'), filename: 'Typed.csv' }]);
    await indexes.idle();
    const meta = (await g.call('GET', 'metadata/')).json<{ metadata: { tables: Array<{ _id: string; name: string; columns: Array<{ key: string; name: string; type: string }> }> } }>();
    const table = meta.metadata.tables.find((x) => x.name === 'Typed')!;
    const column = (name: string) => table.columns.find((c) => c.name === name)!;
    expect([column('Label').type, column('N').type, column('Due').type, column('M').type]).toEqual(['single-select', 'number', 'date', 'number']);
    const indexed = (await indexes.indexesOf(g.base.id, table._id)).filter((e) => e.column_key !== '').map((e) => e.column_key).sort();
    // The first two of its number and date columns (N, Due), not M (over the limit) nor the text and single-select columns.
    expect(indexed).toEqual(dialect === 'postgres' ? [column('N').key, column('Due').key].sort() : []);
    const filtered = async () => {
      const res = await g.call('POST', 'filtered-rows/?table_name=Typed&limit=10', {
        filters: [
          { column_name: 'N', filter_predicate: 'greater_or_equal', filter_term: 250 },
          { column_name: 'N', filter_predicate: 'less', filter_term: 255 },
        ],
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ rows: Array<{ Name: string }> }>().rows.map((r) => r.Name);
    };
    expect(await filtered()).toEqual(['row 250', 'row 251', 'row 252', 'row 253', 'row 254']);
    // A table too small for indexes gets none of them either.
    await importCsv('import-excel-csv-to-table', [{ name: 'file', value: [head, ...lines.slice(0, 40)].join('\n'), filename: 'TypedSmall.csv' }]);
    await indexes.idle();
    expect((await indexes.indexesOf(g.base.id, await tableId('TypedSmall'))).length).toBe(0);
    indexes.options.bulkFilterColumns = 0;
    await importCsv('import-excel-csv-to-table', [{ name: 'file', value: [head, ...lines].join('\n'), filename: 'TypedOff.csv' }]);
    await indexes.idle();
    expect((await indexes.indexesOf(g.base.id, await tableId('TypedOff'))).filter((e) => e.column_key !== '')).toEqual([]);
  });

  it('an import appended to an existing table makes it big: its position index follows', async () => {
    const { indexes } = t.container.baseData;
    await importCsv('import-excel-csv-to-table', [{ name: 'file', value: csv(0, 60), filename: 'Grown.csv' }]);
    await indexes.idle();
    const grown = await tableId('Grown');
    expect(indexes.positionIndex(g.base.id, grown)).toBeUndefined();
    await importCsv('append-excel-csv-to-table', [
      { name: 'table_name', value: 'Grown' },
      { name: 'file', value: csv(60, 200), filename: 'more.csv' },
    ]);
    await indexes.idle();
    if (dialect === 'postgres') expect(indexes.positionIndex(g.base.id, grown)).toBeDefined();
    else expect(indexes.positionIndex(g.base.id, grown)).toBeUndefined();
  });
});
