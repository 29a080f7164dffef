import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createTestApp, type TestApp } from '../helpers/index.js';
import { baseWithRoles, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, through, type Gateway } from './rows.fixtures.js';

const DAY = 86_400_000;
type Trashed = { _id: string; table_id: string; table_name: string; row_name: string; deleted_by: string; op_id: number; row_data: Record<string, unknown> };

describe.each(DIALECTS)('row trash (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;
  let linkId: string;

  beforeAll(async () => {
    t = await createTestApp(dialect, { TRASH_RETENTION_DAYS: '30' });
    const { owner, base, roles: r } = await baseWithRoles(t);
    roles = r;
    g = through(t, { owner, base, token: roles.tokens.owner });
    await addTable(g, 'Authors', [{ column_name: 'Name', column_type: 'text' }]);
    const column = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'By', column_type: 'link', column_data: { table: 'Table1', other_table: 'Authors' } });
    linkId = column.json().data.link_id;
  });
  afterAll(() => t.close());

  const trash = async (query = '', token = roles.tokens.owner): Promise<Trashed[]> => {
    const res = await g.call('GET', `trash/rows/${query}`, undefined, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().rows;
  };
  const restore = (rowId: string, token = roles.tokens.owner) => g.call('PUT', `trash/rows/${rowId}/`, {}, token);

  it('lists deleted rows with their cells and restores one with its links and comments (owner and admin only)', async () => {
    const [book, kept] = await appendRows(g, 'Table1', [{ Name: 'Dune' }, { Name: 'Kept' }]);
    const [author] = await appendRows(g, 'Authors', [{ Name: 'Herbert' }]);
    await g.call('POST', 'links/', { link_id: linkId, table_name: 'Table1', other_table_name: 'Authors', other_rows_ids_map: { [book!]: [author!] } });
    expect((await g.call('POST', 'comments/', { table_id: '0000', row_id: book, comment: 'keep this' })).statusCode).toBe(200);
    const before = (await g.call('GET', `rows/${book}/?table_name=Table1&convert_keys=true`)).json();
    t.clock.advance(60_000);
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [book, kept] });

    const listed = await trash();
    expect(listed.map((r) => r._id).sort()).toEqual([book, kept].sort());
    expect(listed.find((r) => r._id === book)).toMatchObject({ table_id: '0000', table_name: 'Table1', row_name: 'Dune', row_data: { _id: book } });
    // Readers see it (they see the history anyway); restoring is for the owner and admins.
    expect((await trash('', roles.tokens.r)).length).toBe(2);
    for (const role of ['rw', 'api-rw'] as const) expect((await restore(book!, roles.tokens[role])).statusCode).toBe(403);
    expect((await restore(book!, roles.tokens.admin)).json()).toEqual({ success: true });

    const after = (await g.call('GET', `rows/${book}/?table_name=Table1&convert_keys=true`)).json();
    // The row comes back as it was, with its creator and created time; only who last wrote it (and
    // when) is now the restorer's (as restore-operations/).
    const cells = ({ _last_modifier, _mtime, ...rest }: Record<string, unknown>) => rest;
    expect(cells(after)).toEqual(cells(before));
    expect(after._creator).toBe(before._creator);
    expect(after._ctime).toBe(before._ctime);
    expect(after._last_modifier).not.toBe(before._creator);
    expect(after._mtime).not.toBe(before._mtime);
    expect(after.By).toEqual([{ row_id: author, display_value: 'Herbert' }]);
    expect(JSON.stringify((await g.call('GET', `comments/?row_id=${book}`)).json())).toContain('keep this');
    // Only the other row stays in the trash; the restore is an operation reverting the delete.
    expect((await trash()).map((r) => r._id)).toEqual([kept]);
    const last = (await g.call('GET', 'operations/?per_page=1')).json().operations[0];
    expect(last.reverts).toBe(listed[0]!.op_id);
    expect((await restore(book!)).statusCode).toBe(404);
  });

  it('filters by table, pages, and forgets deletions older than TRASH_RETENTION_DAYS', async () => {
    const [old] = await appendRows(g, 'Authors', [{ Name: 'Old' }]);
    await g.call('DELETE', 'rows/', { table_name: 'Authors', row_ids: [old] });
    const authorsId = (await trash()).find((r) => r._id === old)!.table_id;
    expect((await trash(`?table_id=${authorsId}`)).map((r) => r._id)).toEqual([old]);
    expect(await trash('?per_page=1&page=2')).toHaveLength(1);
    t.clock.advance(31 * DAY);
    g = through(t, { owner: g.owner, base: g.base, token: await baseToken(t, g.owner, g.base) });
    roles.tokens.owner = g.token;
    expect((await trash()).map((r) => r._id)).not.toContain(old);
    expect((await restore(old!)).statusCode).toBe(404);
    for (const q of ['?per_page=0', '?page=x']) expect((await g.call('GET', `trash/rows/${q}`)).statusCode).toBe(400);
    expect((await restore('x'.repeat(40))).statusCode).toBe(400);
  });

  it("shows a trashed row's cells of its table's current columns only (a column deleted since is left out)", async () => {
    const note = (await g.call('POST', 'columns/', { table_name: 'Authors', column_name: 'Note', column_type: 'text' })).json();
    const [row] = await appendRows(g, 'Authors', [{ Name: 'Tolkien', Note: 'gone with its column' }]);
    await g.call('DELETE', 'rows/', { table_name: 'Authors', row_ids: [row] });
    const listed = () => trash().then((rows) => rows.find((r) => r._id === row)!.row_data);
    expect(await listed()).toMatchObject({ [note.key]: 'gone with its column' });
    expect((await g.call('DELETE', 'columns/', { table_name: 'Authors', column: 'Note' })).statusCode).toBe(200);
    const data = await listed();
    expect(data).not.toHaveProperty(note.key);
    expect(Object.values(data)).toContain('Tolkien');
  });
});
