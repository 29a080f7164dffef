import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createTestApp, type TestApp } from '../helpers/index.js';
import { baseWithRoles, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, through, type Gateway } from './rows.fixtures.js';

const DAY = 86_400_000;
type TrashedTable = { id: number; table_id: string; table_name: string; deleted_by: string; deleted_at: string; row_count: number };

describe.each(DIALECTS)('table trash and row purge (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;

  beforeAll(async () => {
    t = await createTestApp(dialect, { TRASH_RETENTION_DAYS: '30' });
    const { owner, base, roles: r } = await baseWithRoles(t);
    roles = r;
    g = through(t, { owner, base, token: roles.tokens.owner });
  });
  afterAll(() => t.close());

  const tables = async (token = roles.tokens.owner): Promise<{ count: number; tables: TrashedTable[] }> => {
    const res = await g.call('GET', 'trash/tables/', undefined, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const metadata = async () => (await g.call('GET', 'metadata/')).json().metadata as { tables: Array<{ _id: string; name: string; columns: Array<{ key: string; name: string; type: string }> }> };
  const rowsOf = async (table: string) => (await g.call('GET', `rows/?table_name=${table}&convert_keys=true`)).json().rows as Array<Record<string, unknown>>;

  it('keeps a deleted table with its rows, links and comments, and restores it (owner and admin only)', async () => {
    await addTable(g, 'Books', [{ column_name: 'Title', column_type: 'text' }, { column_name: 'Pages', column_type: 'number' }]);
    await addTable(g, 'Writers', [{ column_name: 'Name', column_type: 'text' }]);
    await g.call('POST', 'columns/', { table_name: 'Books', column_name: 'By', column_type: 'link', column_data: { table: 'Books', other_table: 'Writers' } });
    const linkId = (await metadata()).tables.find((x) => x.name === 'Books')!.columns.find((c) => c.name === 'By') as unknown as { data: { link_id: string } };
    const [dune, emma] = await appendRows(g, 'Books', [{ Title: 'Dune', Pages: 412 }, { Title: 'Emma', Pages: 300 }]);
    const [herbert] = await appendRows(g, 'Writers', [{ Name: 'Herbert' }]);
    await g.call('POST', 'links/', { link_id: linkId.data.link_id, table_name: 'Books', other_table_name: 'Writers', other_rows_ids_map: { [dune!]: [herbert!] } });
    const booksId = (await metadata()).tables.find((x) => x.name === 'Books')!._id;
    expect((await g.call('POST', 'comments/', { table_id: booksId, row_id: dune, comment: 'classic' })).statusCode).toBe(200);
    const before = await rowsOf('Books');
    t.clock.advance(60_000);

    expect((await g.call('DELETE', 'tables/', { table_name: 'Books' })).statusCode).toBe(200);
    expect((await metadata()).tables.map((x) => x.name)).not.toContain('Books');
    // The other table lost its link column with the table.
    expect((await metadata()).tables.find((x) => x.name === 'Writers')!.columns.map((c) => c.type)).not.toContain('link');

    const listed = (await tables()).tables;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ table_id: booksId, table_name: 'Books', row_count: 2 });
    // Readers see the trash, as the history; restoring and purging is for the owner and admins.
    expect((await tables(roles.tokens.r)).count).toBe(1);
    for (const role of ['rw', 'api-rw', 'r'] as const) {
      expect((await g.call('PUT', `trash/tables/${listed[0]!.id}/`, {}, roles.tokens[role])).statusCode).toBe(403);
      expect((await g.call('DELETE', `trash/tables/${listed[0]!.id}/`, undefined, roles.tokens[role])).statusCode).toBe(403);
    }
    const restored = await g.call('PUT', `trash/tables/${listed[0]!.id}/`, {}, roles.tokens.admin);
    expect(restored.statusCode, restored.body).toBe(200);
    expect(restored.json()).toMatchObject({ success: true, table_id: booksId, table_name: 'Books' });

    const after = await rowsOf('Books');
    // The rows stayed where they were: they come back exactly as they were (creator, times, modifier).
    expect(after).toEqual(before);
    expect(after.find((r) => r._id === dune)!.By).toEqual([{ row_id: herbert, display_value: 'Herbert' }]);
    expect(after.find((r) => r._id === emma)!.Pages).toBe(300);
    // The Writers table has its side of the link again.
    const writers = await rowsOf('Writers');
    expect(JSON.stringify(writers)).toContain(dune!);
    expect(JSON.stringify((await g.call('GET', `comments/?row_id=${dune}`)).json())).toContain('classic');
    expect((await tables()).tables).toEqual([]);
    expect((await g.call('PUT', `trash/tables/${listed[0]!.id}/`, {})).statusCode).toBe(404);
  });

  it('reverts a table delete through restore-operations, and refuses a restore when the name was taken', async () => {
    await addTable(g, 'Notes', [{ column_name: 'Text', column_type: 'text' }]);
    await appendRows(g, 'Notes', [{ Text: 'one' }]);
    await g.call('DELETE', 'tables/', { table_name: 'Notes' });
    const op = (await g.call('GET', 'operations/?per_page=1')).json().operations[0];
    expect(op.op_type).toBe('delete_table');
    // A new table took the name: 409, and nothing changed.
    await addTable(g, 'Notes', [{ column_name: 'Text', column_type: 'text' }]);
    const refused = await g.call('PUT', `restore-operations/${op.op_id}/`, {});
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().error_msg).toContain('Notes');
    expect((await tables()).tables.map((x) => x.table_name)).toEqual(['Notes']);
    await g.call('PUT', 'tables/', { table_name: 'Notes', new_table_name: 'Notes 2' });
    const ok = await g.call('PUT', `restore-operations/${op.op_id}/`, {});
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await rowsOf('Notes')).map((r) => r.Text)).toEqual(['one']);
    expect((await tables()).tables).toEqual([]);
  });

  it('purges a table for good, and the retention tick purges old ones', async () => {
    await addTable(g, 'Gone', [{ column_name: 'Name', column_type: 'text' }]);
    await appendRows(g, 'Gone', [{ Name: 'x' }]);
    await g.call('DELETE', 'tables/', { table_name: 'Gone' });
    const [gone] = (await tables()).tables;
    expect((await g.call('DELETE', `trash/tables/${gone!.id}/`)).json()).toEqual({ success: true });
    expect((await tables()).count).toBe(0);
    expect((await g.call('PUT', `trash/tables/${gone!.id}/`, {})).statusCode).toBe(404);
    expect((await g.call('DELETE', `trash/tables/${gone!.id}/`)).statusCode).toBe(404);

    await addTable(g, 'Old', [{ column_name: 'Name', column_type: 'text' }]);
    await appendRows(g, 'Old', [{ Name: 'y' }]);
    await g.call('DELETE', 'tables/', { table_name: 'Old' });
    expect((await tables()).count).toBe(1);
    const oldId = (await tables()).tables[0]!.table_id;
    // The trashed table's rows stay stored under its id (invisible: no table of the metadata has it).
    const stored = async () =>
      Number((await t.container.db.selectFrom('base_rows').select((eb) => eb.fn.countAll().as('n')).where('base_id', '=', g.base.id).where('table_id', '=', oldId).executeTakeFirstOrThrow()).n);
    expect(await stored()).toBe(1);
    t.clock.advance(31 * DAY);
    expect(await t.container.history.service.purgeExpiredTrash(t.clock.now())).toEqual({ purged: 1 });
    expect(await stored()).toBe(0);
    g = through(t, { owner: g.owner, base: g.base, token: await baseToken(t, g.owner, g.base) });
    roles.tokens.owner = g.token;
    expect((await tables()).count).toBe(0);
    for (const bad of ['0', 'x', '-1']) expect((await g.call('PUT', `trash/tables/${bad}/`, {})).statusCode).toBe(400);
    expect((await g.call('GET', 'trash/tables/?per_page=500')).statusCode).toBe(400);
  });

  it('keeps a trashed table\'s rows in place but invisible: SQL, archive, copy; purge deletes rows, links and comments', async () => {
    await addTable(g, 'Hidden', [{ column_name: 'Name', column_type: 'text' }]);
    await addTable(g, 'Peers', [{ column_name: 'Name', column_type: 'text' }]);
    const link = await g.call('POST', 'columns/', { table_name: 'Hidden', column_name: 'Peer', column_type: 'link', column_data: { table: 'Hidden', other_table: 'Peers' } });
    const linkId = link.json().data.link_id as string;
    const [h1] = await appendRows(g, 'Hidden', [{ Name: 'needle-7f3' }, { Name: 'b' }]);
    const [p1] = await appendRows(g, 'Peers', [{ Name: 'peer' }]);
    await g.call('POST', 'links/', { link_id: linkId, table_name: 'Hidden', other_table_name: 'Peers', other_rows_ids_map: { [h1!]: [p1!] } });
    const hiddenId = (await metadata()).tables.find((x) => x.name === 'Hidden')!._id;
    expect((await g.call('POST', 'comments/', { table_id: hiddenId, row_id: h1, comment: 'kept' })).statusCode).toBe(200);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Hidden' })).statusCode).toBe(200);

    const db = t.container.db;
    const count = async (table: 'base_rows' | 'base_links' | 'row_comments', column: 'table_id' | 'link_id', id: string) =>
      Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} where base_id = ${g.base.id} and ${sql.ref(column)} = ${id}`.execute(db)).rows[0]!.n);
    // Nothing was deleted or copied by the delete ...
    expect(await count('base_rows', 'table_id', hiddenId)).toBe(2);
    expect(await count('base_links', 'link_id', linkId)).toBe(1);
    // ... and no read sees it: SQL, the other table's links, the whole-base archive, a copy.
    const sqlRes = await g.call('POST', 'sql/', { sql: 'SELECT * FROM Hidden', convert_keys: true });
    expect(sqlRes.statusCode).toBe(400);
    expect(JSON.stringify(await rowsOf('Peers'))).not.toContain(h1!);
    const url = `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-export/export-dtable/?dtable_name=${encodeURIComponent(g.base.name)}&ignore_asset=true`;
    const archive = await t.request({ method: 'GET', url, token: g.owner.token });
    expect(archive.statusCode).toBe(200);
    const { default: yauzl } = await import('yauzl');
    const entries = await new Promise<Map<string, string>>((resolve, reject) =>
      yauzl.fromBuffer(archive.rawPayload, { lazyEntries: true }, (error, zip) => {
        if (error || !zip) return reject(error);
        const out = new Map<string, string>();
        zip.on('entry', (entry: { fileName: string }) =>
          zip.openReadStream(entry as never, async (e, stream) => {
            if (e || !stream) return reject(e);
            const chunks: Buffer[] = [];
            for await (const c of stream) chunks.push(c as Buffer);
            out.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          }),
        );
        zip.on('end', () => resolve(out));
        zip.readEntry();
      }),
    );
    expect(entries.get('rows.jsonl')).not.toContain(hiddenId);
    expect(entries.get('rows.jsonl')).toContain(p1!);
    expect(entries.get('links.jsonl') ?? '').not.toContain(linkId);
    const copy = await t.request({ method: 'POST', url: '/api/v2.1/dtable-copy/', token: g.owner.token, payload: { src_workspace_id: g.base.workspaceId, dst_workspace_id: g.base.workspaceId, name: g.base.name } });
    expect(copy.statusCode, copy.body).toBe(200);
    const copyId = Number((await db.selectFrom('bases').select('id').where('uuid', '=', copy.json().dtable.uuid).executeTakeFirstOrThrow()).id);
    const copied = await db.selectFrom('base_rows').select('table_id').where('base_id', '=', copyId).execute();
    expect(copied.length).toBeGreaterThan(0);
    expect(copied.map((r) => r.table_id)).not.toContain(hiddenId);

    // Purged for good: rows, links and comments go (in batches), the entry too.
    const entry = (await tables()).tables.find((x) => x.table_name === 'Hidden')!;
    expect(entry.row_count).toBe(2);
    expect((await g.call('DELETE', `trash/tables/${entry.id}/`)).json()).toEqual({ success: true });
    expect(await count('base_rows', 'table_id', hiddenId)).toBe(0);
    expect(await count('base_links', 'link_id', linkId)).toBe(0);
    expect(await count('row_comments', 'table_id', hiddenId)).toBe(0);
    expect((await rowsOf('Peers')).map((r) => r.Name)).toEqual(['peer']);
  });

  it('purges a deleted row from the trash for good: it is no longer listed nor restorable', async () => {
    const [row] = await appendRows(g, 'Table1', [{ Name: 'secret' }]);
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [row] });
    const op = (await g.call('GET', 'operations/?per_page=1')).json().operations[0];
    expect((await g.call('DELETE', `trash/rows/${row}/`, undefined, roles.tokens.rw)).statusCode).toBe(403);
    expect((await g.call('DELETE', `trash/rows/${row}/`)).json()).toEqual({ success: true });
    expect((await g.call('GET', 'trash/rows/')).json().rows.map((r: { _id: string }) => r._id)).not.toContain(row);
    expect((await g.call('PUT', `trash/rows/${row}/`, {})).statusCode).toBe(404);
    expect((await g.call('DELETE', `trash/rows/${row}/`)).statusCode).toBe(404);
    // The cells are gone from the log too (its insert's as well), and from the row's history.
    expect(JSON.stringify((await g.call('GET', 'operations/?per_page=5')).json())).not.toContain('secret');
    expect(JSON.stringify((await g.call('GET', `activities/?row_id=${row}`)).json())).not.toContain('secret');
    // Restoring the delete brings nothing back.
    expect((await g.call('PUT', `restore-operations/${op.op_id}/`, {})).statusCode).toBe(200);
    expect((await rowsOf('Table1')).map((r) => r._id)).not.toContain(row);
  });
});
