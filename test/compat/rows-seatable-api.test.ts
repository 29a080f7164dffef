import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

const require = createRequire(import.meta.url);

type Row = Record<string, unknown> & { _id: string };
interface SeaTableBase {
  auth(): Promise<void>;
  dtableUuid: string;
  accessToken: string;
  getMetadata(): Promise<{ tables: Array<{ _id: string; name: string; columns: Array<{ key: string; name: string; type: string; data: Record<string, unknown> | null }> }> }>;
  addTable(name: string, lang?: string, columns?: unknown[]): Promise<{ _id: string; name: string }>;
  renameTable(name: string, newName: string): Promise<unknown>;
  deleteTable(name: string): Promise<unknown>;
  listColumns(table: string, view?: string): Promise<Array<{ key: string; name: string; type: string; width: number }>>;
  insertColumn(table: string, name: string, type: string, anchor?: string, data?: unknown): Promise<{ key: string; name: string; data: Record<string, unknown> }>;
  renameColumn(table: string, column: string, name: string): Promise<{ name: string }>;
  resizeColumn(table: string, column: string, width: number): Promise<{ width: number }>;
  modifyColumnType(table: string, column: string, type: string): Promise<{ type: string }>;
  deleteColumn(table: string, column: string): Promise<{ success: boolean }>;
  listViews(table: string): Promise<Array<{ name: string }>>;
  addView(table: string, name: string): Promise<{ name: string }>;
  getViewByName(table: string, name: string): Promise<{ name: string }>;
  renameView(table: string, name: string, newName: string): Promise<{ name: string }>;
  deleteView(table: string, name: string): Promise<{ success: boolean }>;
  listRows(table: string, view?: string, orderBy?: string, desc?: boolean, start?: number, limit?: number): Promise<Row[]>;
  getRow(table: string, rowId: string): Promise<Row>;
  appendRow(table: string, row: Record<string, unknown>): Promise<Row>;
  batchAppendRows(table: string, rows: Array<Record<string, unknown>>): Promise<{ inserted_row_count: number }>;
  updateRow(table: string, rowId: string, row: Record<string, unknown>): Promise<{ success: boolean }>;
  batchUpdateRows(table: string, updates: Array<{ row_id: string; row: Record<string, unknown> }>): Promise<{ success: boolean }>;
  deleteRow(table: string, rowId: string): Promise<{ success: boolean }>;
  batchDeleteRows(table: string, rowIds: string[]): Promise<{ success: boolean }>;
  addLink(linkId: string, table: string, otherTable: string, rowId: string, otherRowId: string): Promise<{ success: boolean }>;
  updateLink(linkId: string, table: string, otherTable: string, rowId: string, otherRowIds: string[]): Promise<{ success: boolean }>;
  removeLink(linkId: string, table: string, otherTable: string, rowId: string, otherRowId: string): Promise<{ success: boolean }>;
  batchUpdateLinks(linkId: string, tableId: string, otherTableId: string, rowIds: string[], map: Record<string, string[]>): Promise<{ success: boolean }>;
  getLinkedRecords(tableId: string, linkColumnKey: string, rows: Array<{ row_id: string; limit?: number; offset?: number }>): Promise<Record<string, Array<{ row_id: string; display_value: string }>>>;
}
const { Base } = require('seatable-api') as { Base: new (config: { server: string; APIToken: string }) => SeaTableBase };

describe.each(DIALECTS)('seatable-api against a listening server (%s)', (dialect) => {
  let t: TestApp;
  let server: string;
  let owner: TestUser;
  let testBase: TestBase;
  let base: SeaTableBase;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    owner = await createUser(t);
    testBase = await createBase(t, owner, 'Client rows');
    const created = await t.request({ method: 'POST', url: basePath(testBase, 'api-tokens/'), token: owner.token, payload: { app_name: 'js-client', permission: 'rw' } });
    base = new Base({ server, APIToken: created.json<{ api_token: string }>().api_token });
    await base.auth();
  });
  afterAll(() => t.close());

  it('reads the metadata', async () => {
    const meta = await base.getMetadata();
    expect(meta.tables.map((x) => x.name)).toEqual(['Table1']);
    expect(base.dtableUuid).toBe(testBase.uuid);
  });

  it('manages tables, columns and views', async () => {
    const table = await base.addTable('Contacts', 'en', [{ column_name: 'Name', column_type: 'text' }]);
    expect(table.name).toBe('Contacts');
    const added = await base.insertColumn('Contacts', 'Age', 'number');
    expect((await base.listColumns('Contacts')).map((c) => c.name)).toEqual(['Name', 'Age']);
    expect((await base.renameColumn('Contacts', added.key, 'Years')).name).toBe('Years');
    expect((await base.resizeColumn('Contacts', 'Years', 150)).width).toBe(150);
    await base.insertColumn('Contacts', 'Scratch', 'text');
    expect((await base.modifyColumnType('Contacts', 'Scratch', 'checkbox')).type).toBe('checkbox');
    expect((await base.deleteColumn('Contacts', 'Scratch')).success).toBe(true);
    expect((await base.addView('Contacts', 'Adults')).name).toBe('Adults');
    expect((await base.getViewByName('Contacts', 'Adults')).name).toBe('Adults');
    expect((await base.renameView('Contacts', 'Adults', 'Grown ups')).name).toBe('Grown ups');
    expect((await base.listViews('Contacts')).map((v) => v.name)).toEqual(['Default View', 'Grown ups']);
    await base.addTable('Temp');
    await base.renameTable('Temp', 'Temp2');
    await base.deleteTable('Temp2');
    expect((await base.getMetadata()).tables.map((x) => x.name)).toEqual(['Table1', 'Contacts']);
  });

  it('appends, lists, gets, updates and deletes rows', async () => {
    const first = await base.appendRow('Contacts', { Name: 'Ada', Years: 36 });
    expect(first).toMatchObject({ _creator: 'js-client' });
    const result = await base.batchAppendRows('Contacts', [
      { Name: 'Grace', Years: 85 },
      { Name: 'Linus', Years: 20 },
      { Name: 'Ken', Years: 80 },
    ]);
    expect(result.inserted_row_count).toBe(3);
    const rows = await base.listRows('Contacts');
    expect(rows.map((r) => r.Name)).toEqual(['Ada', 'Grace', 'Linus', 'Ken']);
    expect(rows[0]).toMatchObject({ Name: 'Ada', Years: 36, _creator: 'js-client' });
    const sorted = await base.listRows('Contacts', undefined, 'Years', true, 1, 2);
    expect(sorted.map((r) => r.Name)).toEqual(['Ken', 'Ada']);
    expect(await base.getRow('Contacts', rows[0]!._id)).toMatchObject({ _id: rows[0]!._id, Name: 'Ada', Years: 36 });

    expect((await base.updateRow('Contacts', rows[0]!._id, { Years: 37 })).success).toBe(true);
    expect((await base.batchUpdateRows('Contacts', [{ row_id: rows[1]!._id, row: { Name: 'Grace H.' } }, { row_id: rows[2]!._id, row: { Years: 21 } }])).success).toBe(true);
    const updated = await base.listRows('Contacts');
    expect(updated.map((r) => [r.Name, r.Years])).toEqual([
      ['Ada', 37],
      ['Grace H.', 85],
      ['Linus', 21],
      ['Ken', 80],
    ]);

    expect((await base.deleteRow('Contacts', rows[3]!._id)).success).toBe(true);
    expect((await base.batchDeleteRows('Contacts', [rows[2]!._id])).success).toBe(true);
    expect((await base.listRows('Contacts')).map((r) => r.Name)).toEqual(['Ada', 'Grace H.']);
  });

  it('filters through a view and through the filtered-rows GET with a JSON body', async () => {
    const viewUrl = `${server}/api-gateway/api/v2/dtables/${testBase.uuid}/views/${encodeURIComponent('Grown ups')}/?table_name=Contacts`;
    const put = await request(viewUrl, {
      method: 'PUT',
      headers: { authorization: `Token ${base.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filters: [{ column_name: 'Years', filter_predicate: 'greater', filter_term: 40 }] }),
    });
    expect(put.statusCode).toBe(200);
    await put.body.dump();
    expect((await base.listRows('Contacts', 'Grown ups')).map((r) => r.Name)).toEqual(['Grace H.']);

    const filtered = await request(`${server}/api-gateway/api/v2/dtables/${testBase.uuid}/filtered-rows/?table_name=Contacts`, {
      method: 'GET',
      headers: { authorization: `Token ${base.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filters: [{ column_name: 'Name', filter_predicate: 'contains', filter_term: 'ad' }], filter_conjunction: 'And' }),
    });
    expect(filtered.statusCode).toBe(200);
    expect(((await filtered.body.json()) as { rows: Row[] }).rows.map((r) => r.Name)).toEqual(['Ada']);
  });

  it('adds, updates, removes and queries links', async () => {
    const link = await base.insertColumn('Contacts', 'Friends', 'link', undefined, { table: 'Contacts', other_table: 'Table1' });
    const linkId = link.data.link_id as string;
    const [ada, grace] = await base.listRows('Contacts');
    await base.batchAppendRows('Table1', [{ Name: 'club' }, { Name: 'lab' }]);
    const [club, lab] = await base.listRows('Table1');

    expect((await base.addLink(linkId, 'Contacts', 'Table1', ada!._id, club!._id)).success).toBe(true);
    expect((await base.getRow('Contacts', ada!._id)).Friends).toEqual([{ row_id: club!._id, display_value: 'club' }]);
    expect((await base.updateLink(linkId, 'Contacts', 'Table1', ada!._id, [lab!._id])).success).toBe(true);
    expect((await base.getRow('Contacts', ada!._id)).Friends).toEqual([{ row_id: lab!._id, display_value: 'lab' }]);
    const meta = await base.getMetadata();
    const contacts = meta.tables.find((x) => x.name === 'Contacts')!;
    await base.batchUpdateLinks(linkId, contacts._id, '0000', [grace!._id], { [grace!._id]: [club!._id, lab!._id] });
    const linked = await base.getLinkedRecords(contacts._id, link.key, [{ row_id: grace!._id }, { row_id: ada!._id }]);
    expect(linked[grace!._id]!.map((l) => l.display_value)).toEqual(['club', 'lab']);
    expect(linked[ada!._id]!.map((l) => l.display_value)).toEqual(['lab']);
    expect((await base.removeLink(linkId, 'Contacts', 'Table1', ada!._id, lab!._id)).success).toBe(true);
    expect((await base.getRow('Contacts', ada!._id)).Friends).toEqual([]);
    const lists = await base.listRows('Table1');
    expect(lists.find((r) => r.Name === 'lab')!.Contacts).toEqual([{ row_id: grace!._id, display_value: 'Grace H.' }]);
  });
});
