import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, apiTokenBaseToken, appendRows, eventCount, gateway, listRows, readOnlyToken, storedRowCount, type Gateway } from './rows.fixtures.js';

const COLUMNS = [
  { column_name: 'Name', column_type: 'text' },
  { column_name: 'Amount', column_type: 'number' },
  { column_name: 'Done', column_type: 'checkbox' },
  { column_name: 'Due', column_type: 'date', column_data: { format: 'YYYY-MM-DD HH:mm' } },
  { column_name: 'Status', column_type: 'single-select', column_data: { options: [{ name: 'open', id: '111111' }] } },
  { column_name: 'Tags', column_type: 'multiple-select' },
  { column_name: 'People', column_type: 'collaborator' },
  { column_name: 'Mail', column_type: 'email' },
  { column_name: 'Site', column_type: 'url' },
  { column_name: 'Stars', column_type: 'rate' },
  { column_name: 'Time', column_type: 'duration' },
  { column_name: 'Notes', column_type: 'long-text' },
  { column_name: 'Files', column_type: 'file' },
  { column_name: 'Pics', column_type: 'image' },
  { column_name: 'Where', column_type: 'geolocation' },
  { column_name: 'Created', column_type: 'ctime' },
  { column_name: 'Modified', column_type: 'mtime' },
  { column_name: 'Author', column_type: 'creator' },
  { column_name: 'Editor', column_type: 'last-modifier' },
  { column_name: 'No', column_type: 'auto-number', column_data: { digits: 3, prefix: 'N' } },
];

describe.each(DIALECTS)('rows CRUD (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let keys: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    const table = await addTable(g, 'Items', COLUMNS);
    keys = Object.fromEntries(table.columns.map((c) => [c.name, c.key]));
  });
  afterAll(() => t.close());

  describe('POST rows/', () => {
    it('appends rows and answers the count, the ids and the first row by column key', async () => {
      const res = await g.call('POST', 'rows/', { table_name: 'Items', rows: [{ Name: 'first', Amount: 3 }, { Name: 'second' }] });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.inserted_row_count).toBe(2);
      expect(body.row_ids).toHaveLength(2);
      for (const r of body.row_ids) expect(r._id).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(body.first_row).toMatchObject({ _id: body.row_ids[0]._id, [keys.Name!]: 'first', [keys.Amount!]: 3, _creator: g.owner.virtualId, _last_modifier: g.owner.virtualId });
      expect(body.first_row).not.toHaveProperty('Name');
    });

    it('converts each type as documented, creates unknown options and numbers auto-number cells', async () => {
      const [id] = await appendRows(g, 'Items', [
        {
          Name: 42,
          Amount: ' 12.5 ',
          Done: 'True',
          Due: '2024-03-01T23:30:00+02:00',
          Status: 'brand-new',
          Tags: 'solo',
          People: g.owner.virtualId,
          Mail: 'a@b.example',
          Site: 'https://example.com',
          Stars: '4',
          Time: '1:30',
          Notes: { text: 'long', preview: 'l' },
          Files: [{ name: 'a.txt', url: '/x/a.txt', size: 3, type: 'file' }],
          Pics: 'https://img.example/p.png',
          Where: { lng: 1, lat: 2 },
          Created: 'ignored',
          Author: 'someone-else',
          Unknown: 'dropped',
        },
      ]);
      const rows = await listRows(g, 'table_name=Items&convert_keys=true');
      const row = rows.find((r) => r._id === id)!;
      expect(row).toMatchObject({
        Name: '42',
        Amount: 12.5,
        Done: true,
        Due: '2024-03-01T21:30:00+00:00',
        Status: 'brand-new',
        Tags: ['solo'],
        People: [g.owner.virtualId],
        Stars: 4,
        Time: 5400,
        Notes: 'long',
        Pics: ['https://img.example/p.png'],
        Where: { lng: 1, lat: 2 },
        Author: g.owner.virtualId,
        Editor: g.owner.virtualId,
        Created: '2026-01-05T10:00:00.000+00:00',
        No: expect.stringMatching(/^N-\d{3}$/),
      });
      expect(row).not.toHaveProperty('Unknown');
      const meta = (await g.call('GET', 'metadata/')).json().metadata;
      const status = meta.tables.find((x: { name: string }) => x.name === 'Items').columns.find((c: { name: string }) => c.name === 'Status');
      expect(status.data.options.map((o: { name: string }) => o.name)).toEqual(['open', 'brand-new']);
      expect(status.data.options[1].id).toMatch(/^\d{6}$/);
    });

    it('stores an option id as the option name', async () => {
      const [id] = await appendRows(g, 'Items', [{ Name: 'by id', Status: '111111' }]);
      const row = (await g.call('GET', `rows/${id}/?table_name=Items&convert_keys=true`)).json();
      expect(row.Status).toBe('open');
    });

    it('numbers auto-number cells in order and keeps a written value', async () => {
      const ids = await appendRows(g, 'Items', [{ Name: 'n1' }, { Name: 'n2', No: 'custom' }, { Name: 'n3' }]);
      const rows = await listRows(g, 'table_name=Items&convert_keys=true');
      const numbers = ids.map((id) => rows.find((r) => r._id === id)!.No as string);
      expect(numbers[1]).toBe('custom');
      expect(Number(numbers[2]!.slice(2))).toBe(Number(numbers[0]!.slice(2)) + 1);
    });

    it('refuses a bad cell with a 400 naming the row and column, writing nothing', async () => {
      const before = [await storedRowCount(g), await eventCount(g)];
      for (const [column, value] of [
        ['Amount', 'twelve'],
        ['Done', 'maybe'],
        ['Due', '2024-02-30'],
        ['Due', 12345],
        ['Stars', 2.5],
        ['Time', 'soon'],
        ['Name', { a: 1 }],
        ['Tags', [{}]],
        ['People', [1]],
        ['Files', ['x']],
        ['Where', 'here'],
      ] as const) {
        const res = await g.call('POST', 'rows/', { table_name: 'Items', rows: [{ Name: 'ok' }, { [column]: value }] });
        expect(res.statusCode, `${column}=${JSON.stringify(value)}`).toBe(400);
        expect(res.json().error_msg).toContain(`Row 2: value of column ${column}`);
      }
      expect([await storedRowCount(g), await eventCount(g)]).toEqual(before);
    });

    it('refuses bodies that are not a list of row objects', async () => {
      for (const payload of [{ table_name: 'Items' }, { table_name: 'Items', rows: 'x' }, { table_name: 'Items', rows: [1] }, { table_name: 'Items', rows: [[]] }]) {
        const res = await g.call('POST', 'rows/', payload);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ error_msg: 'rows invalid.' });
      }
    });

    it('accepts a single `row` and `table_id` instead of `table_name`', async () => {
      const meta = (await g.call('GET', 'metadata/')).json().metadata;
      const tableId = meta.tables.find((x: { name: string }) => x.name === 'Items')._id;
      const res = await g.call('POST', 'rows/', { table_id: tableId, row: { Name: 'single' } });
      expect(res.statusCode).toBe(200);
      expect(res.json().inserted_row_count).toBe(1);
    });

    it('answers 404 for an unknown or missing table', async () => {
      expect((await g.call('POST', 'rows/', { table_name: 'Nope', rows: [{}] })).json()).toEqual({ error_msg: 'table Nope not found' });
      expect((await g.call('POST', 'rows/', { rows: [{}] })).statusCode).toBe(404);
    });

    it('fills column defaults only when apply_default is true', async () => {
      const res = await g.call('PUT', 'columns/', { table_name: 'Items', column: 'Mail', op_type: 'modify_column_type', new_column_type: 'email', column_data: { default_value: 'x@y.example', enable_fill_default_value: true } });
      expect(res.statusCode).toBe(200);
      const [withDefault] = await appendRows(g, 'Items', [{ Name: 'd' }]);
      const applied = await g.call('POST', 'rows/', { table_name: 'Items', rows: [{ Name: 'e' }], apply_default: true });
      const withoutId = applied.json().row_ids[0]._id;
      const rows = await listRows(g, 'table_name=Items&convert_keys=true');
      expect(rows.find((r) => r._id === withDefault)!.Mail).toBeNull();
      expect(rows.find((r) => r._id === withoutId)!.Mail).toBe('x@y.example');
    });
  });

  describe('GET rows/ and rows/{id}/', () => {
    it('returns every column, null when empty, keyed by name or key per convert_keys', async () => {
      const [id] = await appendRows(g, 'Items', [{ Name: 'sparse' }]);
      for (const flag of ['true', 'True', '1']) {
        const row = (await listRows(g, `table_name=Items&convert_keys=${flag}`)).find((r) => r._id === id)!;
        for (const c of COLUMNS) expect(row).toHaveProperty(c.column_name);
        expect(row).toMatchObject({ Name: 'sparse', Amount: null, Done: null, Tags: null, Files: null, _archived: false, _locked: null });
        expect(row._ctime).toBe('2026-01-05T10:00:00.000+00:00');
      }
      for (const flag of ['false', 'False', '0', '']) {
        const row = (await listRows(g, `table_name=Items&convert_keys=${flag}`)).find((r) => r._id === id)!;
        expect(row[keys.Name!]).toBe('sparse');
        expect(row).not.toHaveProperty('Name');
        expect(row[keys.Amount!]).toBeNull();
      }
      const bad = await g.call('GET', 'rows/?table_name=Items&convert_keys=yes');
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toEqual({ error_msg: 'convert_keys invalid.' });
    });

    it('gets one row, with and without the trailing slash', async () => {
      const [id] = await appendRows(g, 'Items', [{ Name: 'one', Amount: 1 }]);
      for (const url of [`rows/${id}/?table_name=Items&convert_keys=true`, `rows/${id}?table_name=Items&convert_keys=true`]) {
        const res = await g.call('GET', url);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ _id: id, Name: 'one', Amount: 1, Done: null });
      }
      const byKey = (await g.call('GET', `rows/${id}/?table_name=Items`)).json();
      expect(byKey[keys.Amount!]).toBe(1);
    });

    it('answers 404 for an unknown row or a row of another table', async () => {
      const res = await g.call('GET', 'rows/AAAAAAAAAAAAAAAAAAAAAA/?table_name=Items');
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error_msg: 'row _id not exits' });
      const [other] = await appendRows(g, 'Table1', [{ Name: 'elsewhere' }]);
      expect((await g.call('GET', `rows/${other}/?table_name=Items`)).statusCode).toBe(404);
    });

    it('lists without the trailing slash too', async () => {
      const res = await g.t.request({ method: 'GET', url: `${g.url('rows')}?table_name=Items`, token: g.token });
      expect(res.statusCode).toBe(200);
    });
  });

  describe('PUT rows/', () => {
    it('updates cells, stamps mtime and the modifier, and clears with null or ""', async () => {
      const [id] = await appendRows(g, 'Items', [{ Name: 'before', Amount: 1, Mail: 'm@x.example' }]);
      t.clock.advance(60_000);
      const res = await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: id, row: { Name: 'after', Amount: null, Mail: '' } }] });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true });
      const row = (await g.call('GET', `rows/${id}/?table_name=Items&convert_keys=true`)).json();
      expect(row).toMatchObject({ Name: 'after', Amount: null, Mail: null, _mtime: '2026-01-05T10:01:00.000+00:00', _ctime: '2026-01-05T10:00:00.000+00:00' });
      expect(row.Modified).toBe(row._mtime);
    });

    it('accepts the single {row_id, row} form', async () => {
      const [id] = await appendRows(g, 'Items', [{ Name: 'x' }]);
      expect((await g.call('PUT', 'rows/', { table_name: 'Items', row_id: id, row: { Name: 'y' } })).statusCode).toBe(200);
      expect((await g.call('GET', `rows/${id}/?table_name=Items&convert_keys=true`)).json().Name).toBe('y');
    });

    it('writes nothing when one row of the batch is unknown or one cell is bad', async () => {
      const [id] = await appendRows(g, 'Items', [{ Name: 'keep' }]);
      const events = await eventCount(g);
      const missing = await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: id, row: { Name: 'changed' } }, { row_id: 'AAAAAAAAAAAAAAAAAAAAAA', row: {} }] });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ error_msg: 'row AAAAAAAAAAAAAAAAAAAAAA not found' });
      const bad = await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: id, row: { Name: 'changed' } }, { row_id: id, row: { Amount: 'x' } }] });
      expect(bad.statusCode).toBe(400);
      expect((await g.call('GET', `rows/${id}/?table_name=Items&convert_keys=true`)).json().Name).toBe('keep');
      expect(await eventCount(g)).toBe(events);
    });

    it('refuses malformed updates', async () => {
      for (const payload of [{ table_name: 'Items' }, { table_name: 'Items', updates: [{ row: {} }] }, { table_name: 'Items', updates: [{ row_id: 'x', row: 3 }] }]) {
        expect((await g.call('PUT', 'rows/', payload)).statusCode).toBe(400);
      }
    });

    it('writes no event when nothing changes', async () => {
      const [id] = await appendRows(g, 'Items', [{ Name: 'same', Amount: 2 }]);
      const events = await eventCount(g);
      expect((await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: id, row: { Name: 'same', Amount: '2' } }] })).statusCode).toBe(200);
      expect(await eventCount(g)).toBe(events);
    });
  });

  describe('DELETE rows/', () => {
    it('deletes the rows named, ignores unknown ids, and answers success', async () => {
      const ids = await appendRows(g, 'Items', [{ Name: 'd1' }, { Name: 'd2' }, { Name: 'd3' }]);
      const res = await g.call('DELETE', 'rows/', { table_name: 'Items', row_ids: [ids[0], ids[1], 'AAAAAAAAAAAAAAAAAAAAAA'] });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true, deleted_rows: 2 });
      const remaining = (await listRows(g, 'table_name=Items')).map((r) => r._id);
      expect(remaining).not.toContain(ids[0]);
      expect(remaining).not.toContain(ids[1]);
      expect(remaining).toContain(ids[2]);
    });

    it('refuses a body without a list of ids', async () => {
      expect((await g.call('DELETE', 'rows/', { table_name: 'Items', row_ids: 'x' })).statusCode).toBe(400);
      expect((await g.call('DELETE', 'rows/', { table_name: 'Items', row_ids: [1] })).statusCode).toBe(400);
    });
  });

  describe('who wrote it', () => {
    it('records the API-Token app_name as creator and modifier', async () => {
      const token = await apiTokenBaseToken(g, 'importer');
      const res = await g.call('POST', 'rows/', { table_name: 'Items', rows: [{ Name: 'by app' }] }, token);
      expect(res.statusCode).toBe(200);
      expect(res.json().first_row).toMatchObject({ _creator: 'importer', _last_modifier: 'importer' });
      const id = res.json().row_ids[0]._id;
      await g.call('PUT', 'rows/', { table_name: 'Items', updates: [{ row_id: id, row: { Name: 'by owner' } }] });
      const row = (await g.call('GET', `rows/${id}/?table_name=Items&convert_keys=true`)).json();
      expect(row).toMatchObject({ _creator: 'importer', Author: 'importer', _last_modifier: g.owner.virtualId, Editor: g.owner.virtualId });
    });

    it('lets read-only tokens read but not write', async () => {
      const token = await readOnlyToken(g);
      expect((await g.call('GET', 'rows/?table_name=Items', undefined, token)).statusCode).toBe(200);
      for (const [method, payload] of [
        ['POST', { table_name: 'Items', rows: [{}] }],
        ['PUT', { table_name: 'Items', updates: [] }],
        ['DELETE', { table_name: 'Items', row_ids: [] }],
      ] as const) {
        const res = await g.call(method, 'rows/', payload, token);
        expect(res.statusCode).toBe(403);
      }
    });

    it('refuses requests without a Base-Token', async () => {
      const res = await g.t.request({ method: 'GET', url: g.url('rows/?table_name=Items') });
      expect(res.statusCode).toBe(403);
    });
  });
});
