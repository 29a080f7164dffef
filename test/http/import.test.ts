import ExcelJS from 'exceljs';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { multipart } from '../helpers/asset-fixtures.js';
import { reorderedZip, WORKSHEETS_BEFORE_WORKBOOK, zipParts } from '../helpers/zip-fixtures.js';
import { addTable, gateway, listRows, type Gateway } from './rows.fixtures.js';

const CSV = [
  'Name,Points,Due,Done,Status,Note',
  ...Array.from({ length: 2500 }, (_, i) => `task ${i},${i},2026-0${(i % 9) + 1}-1${i % 10},${i % 2 === 0 ? 'true' : 'false'},${['open', 'closed', 'waiting'][i % 3]},note ${i}`),
].join('\n');

async function xlsx(sheets: Record<string, unknown[][]>): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) workbook.addWorksheet(name).addRows(rows);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

async function zipBomb(): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from('<Types/>'), '[Content_Types].xml');
  zip.addBuffer(Buffer.alloc(50 * 1024 * 1024, 0x20), 'xl/worksheets/sheet1.xml');
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe.each(DIALECTS)('CSV and XLSX import (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const url = (op: string) => `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-import/${op}/`;
  const send = (op: string, file: { name: string; content: string | Buffer; field?: string }, fields: Record<string, string> = {}) => {
    const body = multipart([
      ...Object.entries({ dtable_uuid: g.base.uuid, ...fields }).map(([name, value]) => ({ name, value })),
      { name: file.field ?? 'file', value: file.content, filename: file.name },
    ]);
    return t.request({ method: 'POST', url: url(op), token: g.owner.token, ...body });
  };
  const tableNames = async () => (await g.call('GET', 'metadata/')).json().metadata.tables.map((x: { name: string }) => x.name) as string[];
  const eventCount = async () =>
    Number((await t.container.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', '=', g.base.id).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
  }, 60_000);
  afterAll(() => t?.close());

  it('previews the inferred columns without writing anything', async () => {
    const before = await tableNames();
    const res = await send('preview', { name: 'tasks.csv', content: CSV });
    expect(res.statusCode, res.body).toBe(200);
    const [table] = res.json().tables;
    expect(table).toMatchObject({ name: 'tasks', rows: 2500 });
    // `types`: what each column's cells all convert to (a mapping may choose one of them).
    expect(table.columns).toEqual([
      { name: 'Name', type: 'text', types: ['text'] },
      { name: 'Points', type: 'number', types: ['text', 'number'] },
      { name: 'Due', type: 'date', data: { format: 'YYYY-MM-DD' }, types: ['text', 'date'] },
      { name: 'Done', type: 'checkbox', types: ['text', 'checkbox', 'single-select'] },
      { name: 'Status', type: 'single-select', types: ['text', 'single-select'] },
      { name: 'Note', type: 'text', types: ['text'] },
    ]);
    expect(table.sample[1]).toEqual({ Name: 'task 1', Points: 1, Due: '2026-02-11', Done: false, Status: 'closed', Note: 'note 1' });
    expect(await tableNames()).toEqual(before);
  });

  it('imports a CSV into a new table, in batches that are changes with their events', async () => {
    const events = await eventCount();
    const res = await send('import-excel-csv-to-table', { name: 'tasks.csv', content: CSV });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ success: true, tables: ['tasks'] });
    const meta = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'tasks');
    expect(meta.columns.map((c: { name: string; type: string }) => [c.name, c.type])).toEqual([
      ['Name', 'text'],
      ['Points', 'number'],
      ['Due', 'date'],
      ['Done', 'checkbox'],
      ['Status', 'single-select'],
      ['Note', 'text'],
    ]);
    const rows = await listRows(g, 'table_name=tasks&limit=3&convert_keys=true');
    expect(rows[2]).toMatchObject({ Name: 'task 2', Points: 2, Done: true, Status: 'waiting', Note: 'note 2' });
    expect(String(rows[2]!.Due)).toMatch(/^2026-03-12/);
    // One insert event per row (webhooks and rules see them as rows API appends).
    expect((await eventCount()) - events).toBe(2500);
    const ops = await t.container.db.selectFrom('events').select('op_type').distinct().where('base_id', '=', g.base.id).execute();
    expect(ops.map((o) => o.op_type)).toEqual(['insert_row']);
  }, 60_000);

  it('appends a CSV to a table by column name and updates a table by key columns', async () => {
    await addTable(g, 'People', [
      { column_name: 'Email', column_type: 'text' },
      { column_name: 'Age', column_type: 'number' },
    ]);
    const appended = await send('append-excel-csv-to-table', { name: 'p.csv', content: 'Email,Age,Ignored\na@x.org,30,zzz\nb@x.org,40,zzz\n' }, { table_name: 'People' });
    expect(appended.json()).toEqual({ success: true, appended: 2 });
    const updated = await send('update-table-via-excel-csv', { name: 'p.csv', content: 'Email,Age\nb@x.org,41\nc@x.org,50\n' }, { table_name: 'People', selected_columns: 'Email' });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toEqual({ success: true, updated: 1, appended: 1 });
    const rows = await listRows(g, 'table_name=People&convert_keys=true');
    expect(rows.map((r) => [r.Email, r.Age])).toEqual([
      ['a@x.org', 30],
      ['b@x.org', 41],
      ['c@x.org', 50],
    ]);
    const badKey = await send('update-table-via-excel-csv', { name: 'p.csv', content: 'Email,Age\nb@x.org,1\n' }, { table_name: 'People', selected_columns: 'Nope' });
    expect(badKey.statusCode).toBe(400);
  });

  it('imports with a column mapping: a new table renames, retypes and skips columns; an append maps to other columns', async () => {
    const mapping = { Parts: { Item: { column: 'Article' }, Count: { column: 'Count', type: 'text' }, Note: null } };
    const created = await send('import-excel-csv-to-table', { name: 'Parts.csv', content: 'Item,Count,Note\nBolts,10,x\nNuts,20,y\n' }, { column_mapping: JSON.stringify(mapping) });
    expect(created.statusCode, created.body).toBe(200);
    const meta = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'Parts');
    expect(meta.columns.map((c: { name: string; type: string }) => [c.name, c.type])).toEqual([
      ['Article', 'text'],
      ['Count', 'text'],
    ]);
    expect((await listRows(g, 'table_name=Parts&convert_keys=true')).map((r) => [r.Article, r.Count, r.Note])).toEqual([
      ['Bolts', '10', undefined],
      ['Nuts', '20', undefined],
    ]);
    const appended = await send('append-excel-csv-to-table', { name: 'more.csv', content: 'Thing,Amount,Count\nScrews,30,zzz\n' }, {
      table_name: 'Parts',
      column_mapping: JSON.stringify({ more: { Thing: { column: 'Article' }, Amount: { column: 'Count' }, Count: null } }),
    });
    expect(appended.statusCode, appended.body).toBe(200);
    expect(appended.json()).toEqual({ success: true, appended: 1 });
    expect((await listRows(g, 'table_name=Parts&convert_keys=true')).map((r) => [r.Article, r.Count])).toEqual([
      ['Bolts', '10'],
      ['Nuts', '20'],
      ['Screws', '30'],
    ]);
    const events = await eventCount();
    for (const [op, fields, message] of [
      ['import-excel-csv-to-table', { column_mapping: '{not json' }, /^column_mapping invalid\.$/],
      ['import-excel-csv-to-table', { column_mapping: JSON.stringify({ Bad: { Item: { column: 'Item', type: 'number' } } }) }, /cannot be a number column/],
      ['import-excel-csv-to-table', { column_mapping: JSON.stringify({ Bad: { Nope: null } }) }, /has no column Nope/],
      ['import-excel-csv-to-table', { column_mapping: JSON.stringify({ Bad: { Item: { column: 'Same' }, Count: { column: 'Same' } } }) }, /two columns of the file go to Same/],
      ['append-excel-csv-to-table', { table_name: 'Parts', column_mapping: JSON.stringify({ Bad: { Item: { column: 'Missing' } } }) }, /Column Missing not found/],
    ] as const) {
      const res = await send(op, { name: 'Bad.csv', content: 'Item,Count\nabc,1\n' }, fields);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error_msg).toMatch(message);
    }
    expect(await tableNames()).not.toContain('Bad');
    expect(await eventCount()).toBe(events);
  });

  it('imports an XLSX with two sheets into a new base', async () => {
    const file = await xlsx({ Projects: [['Project', 'Budget'], ['Alpha', 100], ['Beta', 250.5]], Table1: [['Who'], ['Ann']] });
    const body = multipart([{ name: 'dtable', value: file, filename: 'Planning.xlsx' }]);
    const res = await t.request({ method: 'POST', url: url('import-excel-csv-to-base'), token: g.owner.token, ...body });
    expect(res.statusCode, res.body).toBe(200);
    const created = res.json().dtable as { name: string; workspace_id: number };
    expect(created.name).toBe('Planning');
    const token = await t.request({ method: 'GET', url: `/api/v2.1/workspace/${created.workspace_id}/dtable/Planning/access-token/`, token: g.owner.token });
    const { access_token, dtable_uuid } = token.json();
    const meta = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${dtable_uuid}/metadata/`, headers: { authorization: `Token ${access_token}` } });
    const tables = meta.json().metadata.tables as Array<{ name: string; columns: Array<{ name: string; type: string }> }>;
    expect(tables.map((x) => [x.name, x.columns.map((c) => `${c.name}:${c.type}`)])).toEqual([
      ['Projects', ['Project:text', 'Budget:number']],
      ['Table1', ['Who:text']],
    ]);
    const rows = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${dtable_uuid}/rows/?table_name=Projects&convert_keys=true`, headers: { authorization: `Token ${access_token}` } });
    expect(rows.json().rows.map((r: Record<string, unknown>) => [r.Project, r.Budget])).toEqual([
      ['Alpha', 100],
      ['Beta', 250.5],
    ]);
  });

  it('imports an XLSX whose worksheets are stored before its workbook part (exceljs writes that now and then)', async () => {
    // The streaming reader failed on it with a TypeError (a 500) once it had the shared strings: the file is put in order first.
    const file = await reorderedZip(await xlsx({ Tasks: [['Task', 'Hours'], ['Plan', 3]], Notes: [['Note'], ['first']] }), WORKSHEETS_BEFORE_WORKBOOK);
    const stored = (await zipParts(file)).map((p) => p.name);
    expect(stored.indexOf('xl/workbook.xml')).toBeGreaterThan(stored.indexOf('xl/worksheets/sheet2.xml'));
    const preview = await send('preview', { name: 'late.xlsx', content: file });
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json().tables.map((x: { name: string; rows: number }) => [x.name, x.rows])).toEqual([
      ['Tasks', 1],
      ['Notes', 1],
    ]);
    const body = multipart([{ name: 'dtable', value: file, filename: 'Late.xlsx' }]);
    const res = await t.request({ method: 'POST', url: url('import-excel-csv-to-base'), token: g.owner.token, ...body });
    expect(res.statusCode, res.body).toBe(200);
    const { workspace_id } = res.json().dtable as { workspace_id: number };
    const token = (await t.request({ method: 'GET', url: `/api/v2.1/workspace/${workspace_id}/dtable/Late/access-token/`, token: g.owner.token })).json();
    const rows = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${token.dtable_uuid}/rows/?table_name=Tasks&convert_keys=true`, headers: { authorization: `Token ${token.access_token}` } });
    expect(rows.json().rows.map((r: Record<string, unknown>) => [r.Task, r.Hours])).toEqual([['Plan', 3]]);
  });

  describe('bad files get a 400 naming the row, and write nothing', () => {
    it.each([
      ['wrong encoding', 'latin.csv', Buffer.concat([Buffer.from('Name\nok\n'), Buffer.from([0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72, 0x0a])]), /not UTF-8 text \(line 3\)/],
      ['a ragged row', 'ragged.csv', 'A,B\n1,2\n3,4,5\n', /^Row 3: .*different number of cells/],
      ['a formula cell', 'formula.csv', 'A,B\n1,2\n3,"=HYPERLINK(""http://evil"",""x"")"\n', /^Row 3: cell 2 \(B\) holds a formula/],
      ['broken quoting', 'quotes.csv', 'A,B\n1,2\n3,x"y"z\n', /^Row 3: not valid CSV/],
      ['a command cell', 'cmd.csv', 'A,B\n1,"@SUM(1+1)*cmd|\' /C calc\'!A0"\n', /^Row 2: cell 2 \(B\) holds a formula/],
      ['another extension', 'data.txt', 'A\n1\n', /Only \.csv and \.xlsx/],
    ])('%s', async (_label, name, content, message) => {
      const before = await tableNames();
      const events = await eventCount();
      const res = await send('import-excel-csv-to-table', { name, content });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error_msg).toMatch(message);
      expect(await tableNames()).toEqual(before);
      expect(await eventCount()).toBe(events);
    });

    it('an XLSX formula cell', async () => {
      const workbook = new ExcelJS.Workbook();
      const sheet = workbook.addWorksheet('S');
      sheet.addRow(['A', 'B']);
      sheet.addRow([1, 2]);
      sheet.addRow([3, { formula: 'A2+B2', result: 3 }]);
      const before = await tableNames();
      const res = await send('import-excel-csv-to-table', { name: 'f.xlsx', content: Buffer.from(await workbook.xlsx.writeBuffer()) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error_msg).toMatch(/^Row 3: cell 2 holds a formula/);
      expect(await tableNames()).toEqual(before);
    });

    it('a zip bomb disguised as XLSX', async () => {
      const before = await tableNames();
      const res = await send('import-excel-csv-to-table', { name: 'bomb.xlsx', content: await zipBomb() });
      expect(res.statusCode).toBe(400);
      expect(res.json().error_msg).toMatch(/zip bomb/);
      expect(await tableNames()).toEqual(before);
    }, 60_000);
  });
});
