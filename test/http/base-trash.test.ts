import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TEST_PUBLIC_URL, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { multipart } from '../helpers/asset-fixtures.js';
import { addTable, appendRows, listRows, through, type Gateway } from './rows.fixtures.js';

const DAY = 86_400_000;

describe.each(DIALECTS)('base trash (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    t = await createTestApp(dialect, { TRASH_RETENTION_DAYS: '30' });
    owner = await createUser(t);
    admin = await createUser(t);
  });
  afterAll(() => t.close());

  const ws = (b: TestBase) => `/api/v2.1/workspace/${b.workspaceId}/dtable/`;
  const del = (b: TestBase, user = owner) => t.request({ method: 'DELETE', url: ws(b), token: user.token, payload: { name: b.name } });
  const trash = async (user = owner, query = '') => {
    const res = await t.request({ method: 'GET', url: `/api/v2.1/trash-dtables/${query}`, token: user.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ count: number; trash_dtable_list: Array<{ id: number; uuid: string; name: string; deleted: boolean; delete_time: string }> }>();
  };
  const trashedId = async (b: TestBase) => (await trash()).trash_dtable_list.find((x) => x.uuid === b.uuid)!.id;
  const listed = async (user = owner) => {
    const res = await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: user.token });
    type Listed = { table_list?: Array<{ uuid: string }>; shared_table_list?: Array<{ uuid: string }> };
    return res.json().workspace_list.flatMap((w: Listed) => [...(w.table_list ?? []), ...(w.shared_table_list ?? [])].map((b) => b.uuid));
  };
  const baseToken = (b: TestBase, user = owner) => t.request({ method: 'GET', url: basePath(b, 'access-token/'), token: user.token });
  const files = async (b: TestBase) => {
    const month = new Date(t.clock.now()).toISOString().slice(0, 7);
    const res = await t.request({ method: 'GET', url: `/api/v2.1/dtable-asset/${b.uuid}/?parent_dir=/files/${month}`, token: owner.token });
    return res.statusCode === 200 ? res.json().dirent_list.map((d: { obj_name: string }) => d.obj_name) : res.statusCode;
  };
  async function upload(b: TestBase, name: string, content: string) {
    const link = (await t.request({ method: 'GET', url: `/api/v2.1/workspace/${b.workspaceId}/dtable-asset-upload-link/?name=${encodeURIComponent(b.name)}`, token: owner.token })).json();
    const body = multipart([
      { name: 'parent_dir', value: link.parent_path },
      { name: 'relative_path', value: link.file_relative_path },
      { name: 'replace', value: '0' },
      { name: 'file', value: content, filename: name },
    ]);
    expect((await t.request({ method: 'POST', url: `${link.upload_link.slice(TEST_PUBLIC_URL.length)}?ret-json=1`, ...body })).statusCode).toBe(200);
  }

  /** A base with rows, a link, a comment and a file; returns what must come back after a restore. */
  async function fullBase(name: string) {
    const base = await createBase(t, owner, name);
    const g: Gateway = through(t, { owner, base, token: (await baseToken(base)).json().access_token });
    await addTable(g, 'Authors', [{ column_name: 'Name', column_type: 'text' }]);
    const column = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'By', column_type: 'link', column_data: { table: 'Table1', other_table: 'Authors' } });
    const [author] = await appendRows(g, 'Authors', [{ Name: 'Ann' }]);
    const [row] = await appendRows(g, 'Table1', [{ Name: 'Book' }]);
    const link = { link_id: column.json().data.link_id, table_name: 'Table1', other_table_name: 'Authors', other_rows_ids_map: { [row!]: [author!] } };
    expect((await g.call('POST', 'links/', link)).statusCode).toBe(200);
    expect((await g.call('POST', 'comments/', { table_id: '0000', row_id: row, comment: 'keep this' })).statusCode).toBe(200);
    await upload(base, 'a.txt', 'aaa');
    const apiToken = (await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'trash-app', permission: 'rw' } })).json().api_token;
    const state = async () => ({
      rows: await listRows(g, 'table_name=Table1&convert_keys=true'),
      comments: (await g.call('GET', `comments/?row_id=${row}`)).json(),
      files: await files(base),
    });
    return { base, g, apiToken, state };
  }

  it('moves a deleted base to the trash where every access path answers as for a deleted base, and restores it whole', async () => {
    const { base, g, apiToken, state } = await fullBase('Trashed');
    const before = await state();
    expect(before.rows[0]!.By).toHaveLength(1);
    expect(before.files).toEqual(['a.txt']);
    const gone = await createBase(t, owner, 'Gone for good');
    const goneToken = (await baseToken(gone)).json().access_token;
    await del(gone);
    await t.request({ method: 'DELETE', url: `/api/v2.1/trash-dtables/${await trashedId(gone)}/`, token: owner.token });

    expect((await del(base)).json()).toEqual({ success: true });
    expect(await listed()).not.toContain(base.uuid);
    const listing = await trash();
    expect(listing.trash_dtable_list[0]).toMatchObject({ uuid: base.uuid, name: 'Trashed', deleted: true, delete_time: expect.stringMatching(/^\d{4}-/) });
    // The Base-Token issued before, a new one, the API-Token: as for a base deleted for good.
    const asDeleted = await g.call('GET', 'rows/?table_name=Table1');
    const asPurged = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${gone.uuid}/rows/?table_name=Table1`, token: goneToken });
    expect(asDeleted.statusCode).toBe(asPurged.statusCode);
    expect(asDeleted.statusCode).toBeGreaterThanOrEqual(400);
    expect((await baseToken(base)).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${apiToken}` } })).statusCode).toBeGreaterThanOrEqual(400);
    // Its name is free meanwhile; a restore then refuses with 409 until the new base is renamed.
    const namesake = await createBase(t, owner, 'Trashed');
    const id = await trashedId(base);
    const clash = await t.request({ method: 'PUT', url: `/api/v2.1/trash-dtables/${id}/`, token: owner.token });
    expect(clash.statusCode).toBe(409);
    expect(clash.json().error_msg).toMatch(/Trashed/);
    await del(namesake);

    const restored = await t.request({ method: 'PUT', url: `/api/v2.1/trash-dtables/${id}/`, token: owner.token });
    expect(restored.json()).toEqual({ success: true });
    expect(await listed()).toContain(base.uuid);
    const fresh = through(t, { owner, base, token: (await baseToken(base)).json().access_token });
    expect(await listRows(fresh, 'table_name=Table1&convert_keys=true')).toEqual(before.rows);
    expect((await fresh.call('GET', `comments/?row_id=${String(before.rows[0]!._id)}`)).json()).toEqual(before.comments);
    expect(await files(base)).toEqual(before.files);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${apiToken}` } })).statusCode).toBe(200);
  });

  it('purges for good: one base, the whole trash, and after TRASH_RETENTION_DAYS by the scheduler; files go only then', async () => {
    const { base } = await fullBase('Purge me');
    await del(base);
    expect(await files(base)).not.toEqual(['a.txt']); // not reachable while trashed, but kept
    expect(await t.container.assets.service.usage(base.uuid)).toBeGreaterThan(0);
    const id = await trashedId(base);
    expect((await t.request({ method: 'DELETE', url: `/api/v2.1/trash-dtables/${id}/`, token: owner.token })).json()).toEqual({ success: true });
    expect((await trash()).trash_dtable_list.map((b) => b.uuid)).not.toContain(base.uuid);
    expect((await t.request({ method: 'PUT', url: `/api/v2.1/trash-dtables/${id}/`, token: owner.token })).statusCode).toBe(404);
    expect(await t.container.assets.service.usage(base.uuid)).toBe(0);

    const a = await createBase(t, owner, 'Clear A');
    const b = await createBase(t, owner, 'Clear B');
    await del(a);
    await del(b);
    expect((await trash()).count).toBeGreaterThanOrEqual(2);
    expect((await t.request({ method: 'DELETE', url: '/api/v2.1/trash-dtables/', token: owner.token })).json()).toEqual({ success: true });
    expect((await trash()).count).toBe(0);

    const old = await createBase(t, owner, 'Old');
    await del(old);
    t.clock.advance(29 * DAY);
    const recent = await createBase(t, owner, 'Recent');
    await del(recent);
    t.clock.advance(2 * DAY);
    const outcome = await t.container.scheduler.runOnce('base-trash-purge');
    expect(outcome.ran).toBe(true);
    expect((await trash()).trash_dtable_list.map((x) => x.name)).toEqual(['Recent']);
  });

  it('purges a base\'s rows, links, comments and log in batches; a purge that stops is hidden and finished by the next tick', async () => {
    const { base, g } = await fullBase('Purge in batches');
    // More than one batch (1,000) of rows and of logged row entries; a trashed table too.
    const r = await appendRows(g, 'Table1', Array.from({ length: 1000 }, (_, i) => ({ Name: `r${i}` })));
    const s = await appendRows(g, 'Table1', Array.from({ length: 500 }, (_, i) => ({ Name: `s${i}` })));
    // (Appends of new rows add no row index entries: updates do.)
    for (const ids of [r, s]) expect((await g.call('PUT', 'rows/', { table_name: 'Table1', updates: ids.map((row_id) => ({ row_id, row: { Name: `${row_id}'` } })) })).statusCode).toBe(200);
    await addTable(g, 'Trashed', [{ column_name: 'Name', column_type: 'text' }]);
    await appendRows(g, 'Trashed', [{ Name: 'kept under the table id' }]);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Trashed' })).statusCode).toBe(200);
    // A group set of Table1 (a grouped SQL statement over a table that counts as big here).
    const groupSets = t.container.baseData.groupSets;
    groupSets.options.minRows = 1000;
    expect((await g.call('POST', 'sql/', { sql: 'SELECT Name, COUNT(*) FROM Table1 GROUP BY Name' })).statusCode).toBe(200);
    await groupSets.idle();
    // Counted position blocks of Table1 (a deep jump into a listing of a table that counts as big here).
    const indexes = t.container.baseData.indexes;
    const { minRows, positionSkip, recountMs } = indexes.options;
    // (recountMs 0: the table may have been counted as small under the default minRows.)
    Object.assign(indexes.options, { minRows: 1000, positionSkip: 5, recountMs: 0 });
    for (const start of [1200, 1300]) {
      // Read from the database (not a snapshot of the base, nor from a page end it knows).
      t.container.baseData.snapshots.evict(base.id);
      t.container.baseData.rows.positions.clear();
      expect((await g.call('GET', `rows/?table_name=Table1&start=${start}&limit=1`)).statusCode).toBe(200);
      await indexes.idle();
    }
    Object.assign(indexes.options, { minRows, positionSkip, recountMs });
    const db = t.container.db;
    const baseId = base.id;
    const blockRows = async () => {
      const n = async (table: 'row_position_defs' | 'row_position_blocks') =>
        Number((await db.selectFrom(table as never).select((eb) => eb.fn.countAll().as('n')).where('base_id' as never, '=', baseId as never).executeTakeFirstOrThrow()).n);
      return { defs: await n('row_position_defs'), blocks: await n('row_position_blocks') };
    };
    const built = await blockRows();
    expect(built.defs).toBe(1);
    expect(built.blocks).toBeGreaterThan(0);
    const groupDefs = async () => Number((await db.selectFrom('row_group_defs' as never).select((eb) => eb.fn.countAll().as('n')).where('base_id' as never, '=', baseId as never).executeTakeFirstOrThrow()).n);
    expect(await groupDefs()).toBe(1);
    const left = async () => {
      const n = async (table: 'base_rows' | 'base_links' | 'row_comments' | 'operation_log' | 'operation_log_rows' | 'trashed_tables') =>
        Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('base_id', '=', baseId).executeTakeFirstOrThrow()).n);
      return { rows: await n('base_rows'), links: await n('base_links'), comments: await n('row_comments'), ops: await n('operation_log'), opRows: await n('operation_log_rows'), tables: await n('trashed_tables') };
    };
    const before = await left();
    expect(before.rows).toBeGreaterThan(1500);
    expect(before.opRows).toBeGreaterThan(1500);
    expect(Math.min(before.links, before.comments, before.ops, before.tables)).toBeGreaterThan(0);
    await del(base);
    const id = await trashedId(base);

    // A purge stopped half-way (here: a step fails after the data went): the base is out of the trash
    // listing and cannot be restored, but still there; the next tick finishes it.
    let failOnce = true;
    t.container.bases.onBasePurge(async () => {
      if (failOnce) {
        failOnce = false;
        throw new Error('stopped');
      }
    });
    await expect(t.container.bases.trash.purge(null, id)).rejects.toThrow('stopped');
    expect(await left()).toEqual({ rows: 0, links: 0, comments: 0, ops: 0, opRows: 0, tables: 0 });
    expect(await groupDefs()).toBe(0);
    expect(await blockRows()).toEqual({ defs: 0, blocks: 0 });
    expect((await trash()).trash_dtable_list.map((b) => b.uuid)).not.toContain(base.uuid);
    expect((await t.request({ method: 'PUT', url: `/api/v2.1/trash-dtables/${id}/`, token: owner.token })).statusCode).toBe(404);
    expect(await db.selectFrom('bases').select('id').where('id', '=', baseId).executeTakeFirst()).toBeDefined();
    expect((await t.container.bases.trash.purgeExpired(t.clock.now())).purged).toBeGreaterThanOrEqual(1);
    expect(await db.selectFrom('bases').select('id').where('id', '=', baseId).executeTakeFirst()).toBeUndefined();
    expect(await t.container.assets.service.usage(base.uuid)).toBe(0);
  });

  it('deletes a purged base\'s files before its row: a purge that stops while deleting them is finished by the next tick, files included', async () => {
    const { base } = await fullBase('Purge files');
    await upload(base, 'b.txt', 'bbb');
    const usage = () => t.container.assets.service.usage(base.uuid);
    expect(await usage()).toBeGreaterThan(0);
    await del(base);
    const id = await trashedId(base);
    // The storage fails once while the files are deleted (a crash there reads the same to what follows).
    const storage = t.container.assets.storage;
    const deletePrefix = storage.deletePrefix.bind(storage);
    let failOnce = true;
    storage.deletePrefix = async (prefix: string) => {
      if (failOnce && prefix === `${base.uuid}/`) {
        failOnce = false;
        throw new Error('storage down');
      }
      return deletePrefix(prefix);
    };
    try {
      await expect(t.container.bases.trash.purge(null, id)).rejects.toThrow('storage down');
      // Stopped with its files still there: the base is still there too (claimed: neither listed nor
      // restorable), so the next tick finds it.
      expect(await usage()).toBeGreaterThan(0);
      expect(await t.container.db.selectFrom('bases').select('id').where('id', '=', base.id).executeTakeFirst()).toBeDefined();
      expect((await trash()).trash_dtable_list.map((b) => b.uuid)).not.toContain(base.uuid);
      expect((await t.container.bases.trash.purgeExpired(t.clock.now())).purged).toBeGreaterThanOrEqual(1);
      expect(await usage()).toBe(0);
      expect(await t.container.db.selectFrom('bases').select('id').where('id', '=', base.id).executeTakeFirst()).toBeUndefined();
    } finally {
      storage.deletePrefix = deletePrefix;
    }
  });

  it('keeps each owner\'s trash to themselves: others, even the base\'s admins, can neither list, restore nor purge it', async () => {
    const base = await createBase(t, owner, 'Private trash');
    await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: admin.email, permission: 'admin' } });
    expect((await del(base, admin)).statusCode).toBe(403);
    await del(base);
    const id = await trashedId(base);
    expect((await trash(admin)).trash_dtable_list).toEqual([]);
    expect(await listed(admin)).not.toContain(base.uuid);
    await t.request({ method: 'PUT', url: `/api/v2.1/trash-dtables/${id}/`, token: owner.token });
    expect(await listed(admin)).toContain(base.uuid);
    await del(base);
    expect((await baseToken(base, admin)).statusCode).toBe(404);
    for (const method of ['PUT', 'DELETE'] as const) {
      const res = await t.request({ method, url: `/api/v2.1/trash-dtables/${await trashedId(base)}/`, token: admin.token });
      expect(res.statusCode).toBe(404);
      expect(res.json().error_msg).toBeTypeOf('string');
    }
    expect((await t.request({ method: 'PUT', url: '/api/v2.1/trash-dtables/abc/', token: owner.token })).statusCode).toBe(400);
    const badPage = await t.request({ method: 'GET', url: '/api/v2.1/trash-dtables/?per_page=0', token: owner.token });
    expect(badPage.statusCode).toBe(400);
  });
  it('lets the system admin list every trashed base (with its owner), restore and purge one; other admin lists leave trashed bases out', async () => {
    const sysadmin = await createUser(t, { admin: true });
    const base = await createBase(t, owner, 'Admin sees it');
    const hook = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, payload: { url: 'https://example.com/hook' } });
    expect(hook.statusCode, hook.body).toBeLessThan(300);
    const limit = await t.request({ method: 'PUT', url: `/api/v2.1/admin/rate-limits/bases/${base.uuid}/`, token: sysadmin.token, payload: { per_minute: 50 } });
    expect(limit.statusCode, limit.body).toBe(200);
    const adminList = async (url: string) => {
      const res = await t.request({ method: 'GET', url, token: sysadmin.token });
      expect(res.statusCode, res.body).toBe(200);
      return res.body;
    };
    expect(await adminList('/api/v2.1/admin/webhooks/')).toContain(base.uuid);
    expect(await adminList('/api/v2.1/admin/rate-limits/')).toContain(base.uuid);
    await del(base);
    expect(await adminList('/api/v2.1/admin/webhooks/')).not.toContain(base.uuid);
    expect(await adminList('/api/v2.1/admin/rate-limits/')).not.toContain(base.uuid);

    const all = JSON.parse(await adminList('/api/v2.1/admin/trash-dtables/'));
    const entry = all.trash_dtable_list.find((x: { uuid: string }) => x.uuid === base.uuid);
    expect(entry).toMatchObject({ name: 'Admin sees it', deleted: true, owner: expect.any(String) });
    expect(all.count).toBeGreaterThanOrEqual(1);
    // Not for ordinary users (even the owner): 403.
    expect((await t.request({ method: 'GET', url: '/api/v2.1/admin/trash-dtables/', token: owner.token })).statusCode).toBe(403);
    expect((await t.request({ method: 'PUT', url: `/api/v2.1/admin/trash-dtables/${entry.id}/`, token: owner.token })).statusCode).toBe(403);
    expect((await t.request({ method: 'PUT', url: '/api/v2.1/admin/trash-dtables/x/', token: sysadmin.token })).statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/admin/trash-dtables/?per_page=101', token: sysadmin.token })).statusCode).toBe(400);

    expect((await t.request({ method: 'PUT', url: `/api/v2.1/admin/trash-dtables/${entry.id}/`, token: sysadmin.token })).json()).toEqual({ success: true });
    expect(await listed()).toContain(base.uuid);
    expect(await adminList('/api/v2.1/admin/webhooks/')).toContain(base.uuid);
    expect((await t.request({ method: 'PUT', url: `/api/v2.1/admin/trash-dtables/${entry.id}/`, token: sysadmin.token })).statusCode).toBe(404);

    await del(base);
    expect((await t.request({ method: 'DELETE', url: `/api/v2.1/admin/trash-dtables/${entry.id}/`, token: sysadmin.token })).json()).toEqual({ success: true });
    expect(JSON.parse(await adminList('/api/v2.1/admin/trash-dtables/')).trash_dtable_list.map((x: { uuid: string }) => x.uuid)).not.toContain(base.uuid);
  });
});
