import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, listRows, type Gateway } from '../http/rows.fixtures.js';

// Small limits so the test stays small; the defaults are documented in docs/security.md.
const ENV = { CELL_MAX_BYTES: '4096', COLUMN_DATA_MAX_BYTES: '2048', BASE_METADATA_MAX_BYTES: '65536', BASE_READ_MAX_BYTES: '1048576' };

describe.each(DIALECTS)('size limits on stored data (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => {
    t = await createTestApp(dialect, ENV);
    g = await gateway(t);
    await addTable(g, 'T', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Notes', column_type: 'long-text' },
    ]);
  });
  afterAll(() => t.close());

  it('refuses a cell above CELL_MAX_BYTES on append and update, and writes nothing', async () => {
    const big = await g.call('POST', 'rows/', { table_name: 'T', rows: [{ Name: 'ok' }, { Notes: 'x'.repeat(5000) }] });
    expect(big.statusCode).toBe(400);
    expect(big.json().error_msg).toContain('CELL_MAX_BYTES');
    // Multi-byte text is measured in bytes: 1,500 × 3 bytes is over 4,096.
    expect((await g.call('POST', 'rows/', { table_name: 'T', rows: [{ Notes: '€'.repeat(1500) }] })).statusCode).toBe(400);
    expect(await listRows(g, 'table_name=T')).toEqual([]);
    const [id] = await appendRows(g, 'T', [{ Notes: 'x'.repeat(4000) }]);
    const update = await g.call('PUT', 'rows/', { table_name: 'T', updates: [{ row_id: id, row: { Notes: 'y'.repeat(5000) } }] });
    expect(update.statusCode).toBe(400);
    expect(update.json().error_msg).toContain('CELL_MAX_BYTES');
  });

  it('refuses a row with more keys than the table has columns (and a few system keys)', async () => {
    const row = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v']));
    const res = await g.call('POST', 'rows/', { table_name: 'T', rows: [row] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_msg).toMatch(/40 keys, above the limit of 18/);
    // System keys sent back by clients still fit.
    expect((await g.call('POST', 'rows/', { table_name: 'T', rows: [{ Name: 'a', _id: 'x', _ctime: 'y', _mtime: 'z' }] })).statusCode).toBe(200);
  });

  it('refuses column data above COLUMN_DATA_MAX_BYTES', async () => {
    const options = Array.from({ length: 60 }, (_, i) => ({ name: `option number ${i} with a long name` }));
    const res = await g.call('POST', 'columns/', { table_name: 'T', column_name: 'Pick', column_type: 'single-select', column_data: { options } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_msg).toContain('COLUMN_DATA_MAX_BYTES');
    const tables = (await g.call('GET', 'metadata/')).json().metadata.tables as Array<{ name: string; columns: Array<{ name: string }> }>;
    expect(tables.find((x) => x.name === 'T')?.columns.map((c) => c.name)).toEqual(['Name', 'Notes']);
  });

  it("refuses a change that would take the base's structure above BASE_METADATA_MAX_BYTES", async () => {
    const options = Array.from({ length: 20 }, (_, i) => ({ name: `option ${i} of a long list` }));
    let refused: { statusCode: number; json(): { error_msg: string } } | null = null;
    for (let i = 0; i < 200 && refused === null; i++) {
      const res = await g.call('POST', 'columns/', { table_name: 'T', column_name: `Pick ${i}`, column_type: 'single-select', column_data: { options } });
      if (res.statusCode !== 200) refused = res;
    }
    expect(refused?.statusCode).toBe(400);
    expect(refused?.json().error_msg).toContain('BASE_METADATA_MAX_BYTES');
    // The base stays readable and writable below the limit.
    expect((await g.call('GET', 'metadata/')).statusCode).toBe(200);
  });

  it('answers the whole-base read above BASE_READ_MAX_BYTES with a 400, while rows stay readable', async () => {
    const { t: app } = g;
    const table = await addTable(g, 'Big', [{ column_name: 'Text', column_type: 'text' }]);
    for (let i = 0; i < 4; i++) await appendRows(g, 'Big', Array.from({ length: 100 }, () => ({ Text: 'z'.repeat(3500) })));
    const whole = await app.request({ method: 'GET', url: g.url(''), headers: { authorization: `Bearer ${g.token}` } });
    expect(whole.statusCode).toBe(400);
    expect(whole.json().error_msg).toContain('BASE_READ_MAX_BYTES');
    const rows = await g.call('GET', `rows/?table_id=${table._id}&limit=10`);
    expect(rows.statusCode).toBe(200);
    expect(rows.json().rows).toHaveLength(10);
  });
});
