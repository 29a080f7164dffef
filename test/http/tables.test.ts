import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, appWithGateway, gateway, type Gateway, listRows, readOnlyToken, storedRowCount } from './rows.fixtures.js';

describe.each(DIALECTS)('tables and metadata (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => ({ t, g } = await appWithGateway(dialect)));
  afterAll(() => t.close());

  const metadata = async () => (await g.call('GET', 'metadata/')).json().metadata;

  it('serves the metadata of a new base: Table1 with Name and Default View', async () => {
    for (const suffix of ['metadata/', 'metadata']) {
      const res = await g.call('GET', suffix);
      expect(res.statusCode).toBe(200);
      const { metadata: meta } = res.json();
      expect(meta.tables).toHaveLength(1);
      expect(meta.tables[0]).toMatchObject({
        _id: '0000',
        name: 'Table1',
        is_header_locked: false,
        columns: [{ key: '0000', name: 'Name', type: 'text', width: 200, editable: true, data: null, permission_type: '', permitted_users: [] }],
        views: [{ _id: '0000', name: 'Default View', type: 'table', filters: [], sorts: [], filter_conjunction: 'And', hidden_columns: [], rows: [], formula_rows: {} }],
      });
      expect(meta).toHaveProperty('version');
      expect(meta).toHaveProperty('format_version');
    }
  });

  it('creates a table with columns and answers the table object', async () => {
    const res = await g.call('POST', 'tables/', {
      table_name: 'Orders',
      lang: 'en',
      columns: [
        { column_name: 'Order', column_type: 'auto-number', column_data: { digits: 5, prefix: 'O' } },
        { column_name: 'Total', column_type: 'number', column_data: { format: 'euro', decimal: 'comma' } },
        { column_name: 'When', column_type: 'date' },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const table = res.json();
    expect(table._id).toMatch(/^[A-Za-z0-9]{4}$/);
    expect(table).toMatchObject({ name: 'Orders', rows: [], id_row_map: {}, view_structure: { folders: [], view_ids: ['0000'] } });
    expect(table.columns.map((c: { key: string; name: string; type: string }) => [c.name, c.type])).toEqual([
      ['Order', 'auto-number'],
      ['Total', 'number'],
      ['When', 'date'],
    ]);
    expect(table.columns[0].key).toBe('0000');
    expect(table.columns[1].data).toMatchObject({ format: 'euro', decimal: 'comma', thousands: 'no' });
    expect(table.columns[2].data).toEqual({ format: 'YYYY-MM-DD' });
    expect((await metadata()).tables.map((x: { name: string }) => x.name)).toEqual(['Table1', 'Orders']);
  });

  it('gives a table without columns a text column Name', async () => {
    const table = (await g.call('POST', 'tables/', { table_name: 'Bare' })).json();
    expect(table.columns).toMatchObject([{ key: '0000', name: 'Name', type: 'text' }]);
  });

  it('refuses bad tables with 400', async () => {
    const cases: Array<[unknown, string]> = [
      [{ table_name: 'Orders' }, 'Table Orders exists.'],
      [{ table_name: '' }, 'table_name invalid.'],
      [{ table_name: 12 }, 'table_name invalid.'],
      [{ table_name: 'X', columns: 'nope' }, 'columns invalid.'],
      [{ table_name: 'X', columns: [{ column_name: 'Flag', column_type: 'checkbox' }] }, 'The first column can only be of type text, number, date, single-select, formula, auto-number.'],
      [{ table_name: 'X', columns: [{ column_name: 'F', column_type: 'formula', column_data: { formula: '1 +' } }] }, 'Formula error at position 4: unexpected end of formula.'],
      [{ table_name: 'X', columns: [{ column_name: 'F', column_type: 'wibble' }] }, 'column_type wibble invalid.'],
      [{ table_name: 'X', columns: [{ column_name: 'A', column_type: 'text' }, { column_name: 'A', column_type: 'text' }] }, 'Column A exists.'],
      [{ table_name: 'X', columns: [{ column_name: 'A.b', column_type: 'text' }] }, 'column_name invalid.'],
      [{ table_name: 'X', columns: [{ column_name: 'A', column_type: 'text' }, { column_name: 'R', column_type: 'rate', column_data: { rate_max_number: 20 } }] }, 'column_data.rate_max_number invalid.'],
      [{ table_name: 'X', columns: [{ column_name: 'A', column_type: 'text' }, { column_name: 'N', column_type: 'number', column_data: { format: 'bitcoin' } }] }, 'column_data.format invalid.'],
    ];
    for (const [payload, message] of cases) {
      const res = await g.call('POST', 'tables/', payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toEqual({ error_msg: message });
    }
    expect((await metadata()).tables.map((x: { name: string }) => x.name)).not.toContain('X');
  });

  it('renames a table', async () => {
    expect((await g.call('PUT', 'tables/', { table_name: 'Bare', new_table_name: 'Renamed' })).json()).toEqual({ success: true });
    expect((await metadata()).tables.map((x: { name: string }) => x.name)).toContain('Renamed');
    expect((await g.call('PUT', 'tables/', { table_name: 'Renamed', new_table_name: 'Orders' })).json()).toEqual({ error_msg: 'Table Orders exists.' });
    expect((await g.call('PUT', 'tables/', { table_name: 'Nope', new_table_name: 'Y' })).statusCode).toBe(404);
    expect((await g.call('PUT', 'tables/', { table_name: 'Renamed', new_table_name: '  ' })).statusCode).toBe(400);
  });

  it('deletes a table with its rows and the link columns pointing at it', async () => {
    await appendRows(g, 'Renamed', [{ Name: 'a' }, { Name: 'b' }]);
    const link = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Ref', column_type: 'link', column_data: { table: 'Table1', other_table: 'Renamed' } });
    expect(link.statusCode).toBe(200);
    const before = await storedRowCount(g);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Renamed' })).json()).toEqual({ success: true });
    // The rows stay stored for the table trash (invisible), and go when the trash entry is purged.
    expect(await storedRowCount(g)).toBe(before);
    const trashed = (await g.call('GET', 'trash/tables/')).json().tables as Array<{ id: number; table_name: string }>;
    const entry = trashed.find((x) => x.table_name === 'Renamed');
    expect(entry).toBeDefined();
    expect((await g.call('DELETE', `trash/tables/${entry!.id}/`)).json()).toEqual({ success: true });
    expect(await storedRowCount(g)).toBe(before - 2);
    const meta = await metadata();
    expect(meta.tables.map((x: { name: string }) => x.name)).not.toContain('Renamed');
    expect(meta.tables[0].columns.map((c: { name: string }) => c.name)).not.toContain('Ref');
    expect((await g.call('DELETE', 'tables/', { table_name: 'Renamed' })).statusCode).toBe(404);
  });

  it('duplicates a table with or without its rows, leaving link columns out', async () => {
    await addTable(g, 'Source', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Score', column_type: 'number' },
    ]);
    await appendRows(g, 'Source', [{ Title: 'a', Score: 1 }, { Title: 'b', Score: 2 }]);
    const link = await g.call('POST', 'columns/', { table_name: 'Source', column_name: 'Ref', column_type: 'link', column_data: { table: 'Source', other_table: 'Table1' } });
    expect(link.statusCode).toBe(200);

    const empty = await g.call('POST', 'tables/duplicate-table/', { table_name: 'Source' });
    expect(empty.statusCode, empty.body).toBe(200);
    expect(empty.json()).toMatchObject({ name: 'Source(copy)', rows: [] });
    expect(empty.json().columns.map((c: { name: string }) => c.name)).toEqual(['Title', 'Score']);
    expect(await listRows(g, 'table_name=Source(copy)')).toEqual([]);

    const full = await g.call('POST', 'tables/duplicate-table', { table_name: 'Source', is_duplicate_records: true });
    expect(full.json().name).toBe('Source(copy 2)');
    const copied = await listRows(g, `table_name=${encodeURIComponent('Source(copy 2)')}&convert_keys=true`);
    expect(copied.map((r) => [r.Title, r.Score])).toEqual([['a', 1], ['b', 2]]);
    const originals = await listRows(g, 'table_name=Source');
    expect(copied.map((r) => r._id)).not.toContain(originals[0]!._id);

    expect((await g.call('POST', 'tables/duplicate-table/', { table_name: 'Nope' })).statusCode).toBe(404);
    for (const name of ['Source', 'Source(copy)', 'Source(copy 2)']) await g.call('DELETE', 'tables/', { table_name: name });
  });

  it('refuses to delete the last table', async () => {
    const solo = await gateway(t);
    const res = await solo.call('DELETE', 'tables/', { table_name: 'Table1' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'The last table of a base cannot be deleted.' });
  });

  it('bumps the metadata version on each structural change', async () => {
    const v1 = (await metadata()).version;
    await g.call('PUT', 'tables/', { table_name: 'Orders', new_table_name: 'Orders2' });
    expect((await metadata()).version).toBe(v1 + 1);
  });

  it('serves the whole base with each table\'s rows keyed by column key', async () => {
    const fresh = await gateway(t);
    await addTable(fresh, 'Extra', [{ column_name: 'Title', column_type: 'text' }]);
    const [id] = await appendRows(fresh, 'Table1', [{ Name: 'x' }]);
    const res = await fresh.call('GET', '');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.tables.map((x: { name: string }) => x.name)).toEqual(['Table1', 'Extra']);
    expect(body.tables[0].rows).toEqual([expect.objectContaining({ _id: id, '0000': 'x' })]);
    expect(body.tables[1].rows).toEqual([]);
  });

  it('refuses structural writes with a read-only token', async () => {
    const token = await readOnlyToken(g);
    expect((await g.call('GET', 'metadata/', undefined, token)).statusCode).toBe(200);
    expect((await g.call('POST', 'tables/', { table_name: 'Z' }, token)).statusCode).toBe(403);
    expect((await g.call('PUT', 'tables/', { table_name: 'Table1', new_table_name: 'Z' }, token)).statusCode).toBe(403);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Table1' }, token)).statusCode).toBe(403);
  });
});
