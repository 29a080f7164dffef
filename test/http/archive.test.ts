import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { multipart } from '../helpers/asset-fixtures.js';
import { STORAGES, storageEnv } from '../helpers/s3-server.js';
import { addTable, appendRows, gateway, listRows, through, type Gateway } from './rows.fixtures.js';

describe.each(DIALECTS.flatMap((d) => STORAGES.map((s) => [d, s] as const)))('a whole base as a file (%s, %s storage)', (dialect, storage) => {
  let source: TestApp;
  let target: TestApp;
  let g: Gateway;
  let newOwner: TestUser;
  let stops: Array<() => Promise<void>>;
  let month: string;

  const exportUrl = (query = '') => `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-export/export-dtable/?dtable_name=${encodeURIComponent(g.base.name)}${query}`;
  async function importInto(t: TestApp, user: TestUser, file: Buffer) {
    const ws = (await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: user.token })).json().workspace_list[0].id as number;
    const body = multipart([{ name: 'dtable', value: file, filename: 'base.dtable' }]);
    return { ws, res: await t.request({ method: 'POST', url: `/api/v2.1/workspace/${ws}/import-dtable/`, token: user.token, ...body }) };
  }

  beforeAll(async () => {
    const a = await storageEnv(storage);
    const b = await storageEnv(storage);
    stops = [a.close, b.close];
    // Two servers with their own databases and storages: the archive moves between instances.
    source = await createTestApp(dialect, a.env);
    target = await createTestApp(dialect, b.env);
    month = new Date(source.clock.now()).toISOString().slice(0, 7);
    g = await gateway(source);
    await addTable(g, 'Authors', [{ column_name: 'Name', column_type: 'text' }]);
    const column = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Written by', column_type: 'link', column_data: { table: 'Table1', other_table: 'Authors' } });
    const linkId = column.json().data.link_id as string;
    const books = await appendRows(g, 'Table1', [{ Name: 'Dune' }, { Name: 'Emma' }]);
    const people = await appendRows(g, 'Authors', [{ Name: 'Herbert' }, { Name: 'Austen' }]);
    await g.call('POST', 'links/', { link_id: linkId, table_name: 'Table1', other_table_name: 'Authors', other_rows_ids_map: { [books[0]!]: [people[0]!], [books[1]!]: [people[1]!] } });
    const link = await source.request({ method: 'GET', url: `/api/v2.1/workspace/${g.base.workspaceId}/dtable-asset-upload-link/?name=${encodeURIComponent(g.base.name)}`, token: g.owner.token });
    const { upload_link, parent_path, file_relative_path } = link.json();
    const up = multipart([
      { name: 'parent_dir', value: parent_path },
      { name: 'relative_path', value: file_relative_path },
      { name: 'file', value: 'attached bytes', filename: 'notes.txt' },
    ]);
    expect((await source.request({ method: 'POST', url: upload_link.replace('http://basegate.test', ''), ...up })).statusCode).toBe(200);
    newOwner = await createUser(target);
  }, 60_000);

  afterAll(async () => {
    await source?.close();
    await target?.close();
    for (const stop of stops ?? []) await stop();
  });

  it('exports structure, rows, links and files, and imports them into a new base on another server', async () => {
    const exported = await source.request({ method: 'GET', url: exportUrl(), token: g.owner.token });
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['content-type']).toBe('application/x-zip-compressed');
    expect(exported.headers['content-disposition']).toContain('.dtable');
    const { ws, res } = await importInto(target, newOwner, exported.rawPayload);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ task_id: expect.any(String), table: { name: g.base.name, workspace_id: ws } });
    const imported: TestBase = { id: res.json().table.id, uuid: res.json().table.uuid, name: g.base.name, workspaceId: ws };
    const h = through(target, { owner: newOwner, base: imported, token: await baseToken(target, newOwner, imported) });
    const tables = (await h.call('GET', 'metadata/')).json().metadata.tables.map((x: { name: string }) => x.name);
    expect(tables).toEqual((await g.call('GET', 'metadata/')).json().metadata.tables.map((x: { name: string }) => x.name));
    const rowsThere = await listRows(h, 'table_name=Table1&convert_keys=true');
    const rowsHere = await listRows(g, 'table_name=Table1&convert_keys=true');
    expect(rowsThere.map((r) => [r._id, r.Name, r['Written by']])).toEqual(rowsHere.map((r) => [r._id, r.Name, r['Written by']]));
    expect(rowsThere.find((r) => r.Name === 'Dune')!['Written by']).toEqual([expect.objectContaining({ display_value: 'Herbert' })]);
    const file = await target.container.assets.storage.open(`${imported.uuid}/files/${month}/notes.txt`);
    let text = '';
    for await (const chunk of file!) text += chunk.toString();
    expect(text).toBe('attached bytes');
  });

  it('leaves the files out with ignore_asset, and refuses a damaged archive creating nothing', async () => {
    const other = await createUser(target);
    const exported = await source.request({ method: 'GET', url: exportUrl('&ignore_asset=true'), token: g.owner.token });
    const { res } = await importInto(target, other, exported.rawPayload);
    expect(res.statusCode).toBe(200);
    expect(await target.container.assets.storage.list(`${res.json().table.uuid}/`)).toEqual([]);
    const stranger = await createUser(target);
    for (const bad of [Buffer.from('not a zip'), exported.rawPayload.subarray(0, exported.rawPayload.length - 40)]) {
      const { res: refused } = await importInto(target, stranger, bad);
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({ error_msg: expect.any(String) });
    }
    const listing = await target.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: stranger.token });
    expect(listing.statusCode).toBe(200);
    expect(JSON.stringify(listing.json())).not.toContain(g.base.name);
  });
});
