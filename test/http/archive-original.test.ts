import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { multipart } from '../helpers/asset-fixtures.js';

/** A `.dtable` as the original writes it: a zip whose content.json holds the tables with their rows and the links map. */
async function originalDtable(content: unknown): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  zip.addBuffer(Buffer.from(JSON.stringify(content)), 'content.json');
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const view = { _id: '0000', name: 'Default View', type: 'table', is_locked: false, filter_conjunction: 'And', filters: [], sorts: [], groupbys: [], hidden_columns: [] };
const CONTENT = {
  version: 42,
  format_version: 9,
  settings: {},
  tables: [
    {
      _id: '0000',
      name: 'Books',
      columns: [
        { key: '0000', name: 'Name', type: 'text', width: 200, editable: true, resizable: true, draggable: true, data: null },
        { key: 'pg01', name: 'Pages', type: 'number', width: 90, editable: true, resizable: true, draggable: true, data: { format: 'number', decimal: 'dot', thousands: 'no' } },
        { key: 'lk01', name: 'Author', type: 'link', width: 200, editable: true, resizable: true, draggable: true, data: { link_id: 'Lk7a', table_id: '0000', other_table_id: 'Tb2x', display_column_key: '0000' } },
      ],
      views: [view],
      rows: [
        { _id: 'AAAAAAAAAAAAAAAAAAAAAA', _ctime: '2024-03-01T10:00:00.000+00:00', _mtime: '2024-03-02T10:00:00.000+00:00', _creator: 'a@auth.local', _last_modifier: 'a@auth.local', '0000': 'Dune', pg01: 412 },
        { _id: 'BBBBBBBBBBBBBBBBBBBBBB', _ctime: '2024-03-01T11:00:00.000+00:00', _mtime: '2024-03-01T11:00:00.000+00:00', _creator: 'a@auth.local', _last_modifier: 'a@auth.local', '0000': 'Emma', pg01: 474 },
      ],
    },
    {
      _id: 'Tb2x',
      name: 'Authors',
      columns: [{ key: '0000', name: 'Name', type: 'text', width: 200, editable: true, resizable: true, draggable: true, data: null }],
      views: [view],
      rows: [
        { _id: 'CCCCCCCCCCCCCCCCCCCCCC', _ctime: '2024-03-01T10:00:00.000+00:00', _mtime: '2024-03-01T10:00:00.000+00:00', _creator: 'a@auth.local', '0000': 'Herbert' },
        { _id: 'DDDDDDDDDDDDDDDDDDDDDD', _ctime: '2024-03-01T10:00:00.000+00:00', _mtime: '2024-03-01T10:00:00.000+00:00', _creator: 'a@auth.local', '0000': 'Austen' },
      ],
    },
  ],
  links: [
    {
      _id: 'Lk7a',
      table1_id: '0000',
      table2_id: 'Tb2x',
      table1_table2_map: { AAAAAAAAAAAAAAAAAAAAAA: ['CCCCCCCCCCCCCCCCCCCCCC'], BBBBBBBBBBBBBBBBBBBBBB: ['DDDDDDDDDDDDDDDDDDDDDD'] },
      table2_table1_map: { CCCCCCCCCCCCCCCCCCCCCC: ['AAAAAAAAAAAAAAAAAAAAAA'], DDDDDDDDDDDDDDDDDDDDDD: ['BBBBBBBBBBBBBBBBBBBBBB'] },
    },
  ],
  statistics: [],
  collaborators: [],
};

describe.each(DIALECTS)("import-dtable takes the original's .dtable (%s)", (dialect) => {
  let t: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    user = await createUser(t);
  }, 60_000);
  afterAll(() => t?.close());

  const importFile = async (file: Buffer, filename: string) => {
    const ws = (await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: user.token })).json().workspace_list[0].id as number;
    const body = multipart([{ name: 'dtable', value: file, filename }]);
    return t.request({ method: 'POST', url: `/api/v2.1/workspace/${ws}/import-dtable/`, token: user.token, ...body });
  };

  it('makes a base with its tables, columns, views, rows and links, named after the file', async () => {
    const res = await importFile(await originalDtable(CONTENT), 'Library.dtable');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().table.name).toBe('Library');
    const base = { id: 0, uuid: res.json().table.uuid as string, name: 'Library', workspaceId: res.json().table.workspace_id as number };
    const token = await baseToken(t, user, base);
    const get = (suffix: string) => t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/${suffix}`, headers: { authorization: `Token ${token}` } });
    const tables = (await get('metadata/')).json().metadata.tables as Array<{ name: string; columns: Array<{ name: string; type: string }> }>;
    expect(tables.map((x) => [x.name, x.columns.map((c) => `${c.name}:${c.type}`)])).toEqual([
      ['Books', ['Name:text', 'Pages:number', 'Author:link']],
      ['Authors', ['Name:text']],
    ]);
    const books = (await get('rows/?table_name=Books&convert_keys=true')).json().rows as Array<Record<string, unknown>>;
    expect(books.map((r) => [r._id, r.Name, r.Pages, (r.Author as Array<{ display_value: string }>).map((a) => a.display_value)])).toEqual([
      ['AAAAAAAAAAAAAAAAAAAAAA', 'Dune', 412, ['Herbert']],
      ['BBBBBBBBBBBBBBBBBBBBBB', 'Emma', 474, ['Austen']],
    ]);
    expect(books[0]!._ctime).toMatch(/^2024-03-01T10:00:00/);
  }, 60_000);

  it('refuses an original-shaped file with a broken table, creating nothing', async () => {
    const before = (await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: user.token })).json().workspace_list[0].table_list.length as number;
    const res = await importFile(await originalDtable({ tables: [{ _id: '0000', name: 'X', columns: [{ name: 'no key' }] }] }), 'Broken.dtable');
    expect(res.statusCode).toBe(400);
    expect(res.json().error_msg).toMatch(/column 1 is not valid/);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: user.token })).json().workspace_list[0].table_list.length).toBe(before);
  });
});
