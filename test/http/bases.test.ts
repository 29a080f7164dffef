import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('bases and workspaces (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await createUser(t, { email: 'alice@example.com', name: 'Alice' });
    bob = await createUser(t, { email: 'bob@example.com', name: 'Bob' });
  });
  afterAll(() => t.close());

  async function workspaces(user: TestUser) {
    const res = await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: user.token });
    expect(res.statusCode).toBe(200);
    return res.json().workspace_list as Array<Record<string, any>>;
  }

  it('creates a base (multipart, form, JSON) with the record of the contract and a default table', async () => {
    const boundary = 'B0undary';
    const multipart = await t.request({
      method: 'POST',
      url: '/api/v2.1/dtables/',
      token: alice.token,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nProjects\r\n--${boundary}\r\nContent-Disposition: form-data; name="owner"\r\n\r\n${alice.email}\r\n--${boundary}--\r\n`,
    });
    expect(multipart.statusCode).toBe(201);
    const table = multipart.json().table;
    expect(table).toMatchObject({ name: 'Projects', creator: 'Alice', modifier: 'Alice' });
    expect(table.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(table.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    expect(Object.keys(table).sort()).toEqual(
      ['color', 'created_at', 'creator', 'icon', 'id', 'in_storage', 'is_encrypted', 'modifier', 'name', 'text_color', 'updated_at', 'uuid', 'workspace_id'].sort(),
    );
    expect(table).toMatchObject({ in_storage: true, is_encrypted: false });

    const form = await t.request({
      method: 'POST',
      url: '/api/v2.1/dtables',
      token: alice.token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `name=Form%20base&workspace_id=${table.workspace_id}`,
    });
    expect(form.statusCode).toBe(201);
    expect(form.json().table.workspace_id).toBe(table.workspace_id);

    const token = (
      await t.request({ method: 'GET', url: basePath({ workspaceId: table.workspace_id, name: 'Projects' }, 'access-token/'), token: alice.token })
    ).json().access_token;
    const base = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${table.uuid}/`, headers: { authorization: `Bearer ${token}` } });
    expect(base.statusCode).toBe(200);
    const [first] = base.json().tables;
    expect(first).toMatchObject({ _id: '0000', name: 'Table1', columns: [{ key: '0000', name: 'Name', type: 'text' }], views: [{ _id: '0000', name: 'Default View' }] });
    // The original's blank base: a few empty rows, so clients can read a first row.
    expect(first.rows).toHaveLength(3);
    for (const row of first.rows) expect(Object.keys(row).filter((k) => !k.startsWith('_'))).toEqual([]);
    expect(base.json().settings).toEqual({ date_settings: { first_day_of_week: 'Monday' } });
  });

  it('lists own bases in the personal workspace and shared ones separately', async () => {
    const shared = await createBase(t, bob, 'Bob shares this');
    await t.request({ method: 'POST', url: basePath(shared, 'share/'), token: bob.token, payload: { email: alice.email, permission: 'r' } });
    const list = await workspaces(alice);
    const personal = list.find((w) => w.type === 'personal')!;
    expect(personal.owner_name).toBe('Alice');
    expect(personal.table_list.map((b: { name: string }) => b.name)).toEqual(expect.arrayContaining(['Projects', 'Form base']));
    expect(personal.table_list.map((b: { name: string }) => b.name)).not.toContain('Bob shares this');
    const sharedEntry = list.find((w) => w.type === 'shared')!;
    expect(sharedEntry.shared_table_list).toEqual([
      expect.objectContaining({ name: 'Bob shares this', permission: 'r', from_user: bob.virtualId, from_user_name: 'Bob' }),
    ]);
  });

  it('refuses bad names and bad targets with 400 and creates nothing', async () => {
    const before = (await workspaces(alice)).find((w) => w.type === 'personal')!.table_list.length;
    const bad: unknown[] = [
      { name: '' },
      { name: '   ' },
      { name: 'a/b' },
      { name: 'back\\slash' },
      { name: 'tab\there' },
      { name: 'x'.repeat(256) },
      { name: 42 },
      {},
      { name: 'ok', workspace_id: 'abc' },
      { name: 'ok', owner: 'nobody@example.com' },
    ];
    for (const payload of bad) {
      const res = await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: alice.token, payload: payload as object });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toHaveProperty('error_msg');
    }
    const after = (await workspaces(alice)).find((w) => w.type === 'personal')!.table_list.length;
    expect(after).toBe(before);
  });

  it('refuses creating in another user\'s workspace or as another owner', async () => {
    const bobsWorkspace = (await workspaces(bob)).find((w) => w.type === 'personal')!.id;
    const inWorkspace = await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: alice.token, payload: { name: 'intrude', workspace_id: bobsWorkspace } });
    expect(inWorkspace.statusCode).toBe(403);
    expect(inWorkspace.json()).toEqual({ error_msg: 'Permission denied.' });
    const asOwner = await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: alice.token, payload: { name: 'intrude', owner: bob.email } });
    expect(asOwner.statusCode).toBe(403);
    const unknown = await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: alice.token, payload: { name: 'x', workspace_id: 999999 } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error_msg: 'Workspace 999999 not found.' });
  });

  it('accepts odd names and keeps them usable through every path that names a base', async () => {
    for (const name of ['with space', 'Ünïcødé ✓', 'emoji 🚀🧪', 'percent %20 and ? & # +', 'y'.repeat(255)]) {
      const base = await createBase(t, alice, name);
      expect(base.name).toBe(name);
      const token = await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: alice.token });
      expect(token.statusCode, name).toBe(200);
      const shares = await t.request({ method: 'GET', url: basePath(base, 'share/'), token: alice.token });
      expect(shares.statusCode, name).toBe(200);
      const links = await t.request({ method: 'GET', url: basePath(base, 'external-links'), token: alice.token });
      expect(links.statusCode, name).toBe(200);
      const renamed = await t.request({
        method: 'PUT',
        url: `/api/v2.1/workspace/${base.workspaceId}/dtable/`,
        token: alice.token,
        payload: { name, new_name: `${name.slice(0, 200)} (2)` },
      });
      expect(renamed.statusCode, name).toBe(200);
      const deleted = await t.request({
        method: 'DELETE',
        url: `/api/v2.1/workspace/${base.workspaceId}/dtable/`,
        token: alice.token,
        payload: { name: `${name.slice(0, 200)} (2)` },
      });
      expect(deleted.json(), name).toEqual({ success: true });
    }
  });

  it('treats names as unique per workspace: one of two concurrent creates wins, the other gets 409', async () => {
    const results = await Promise.all(
      [1, 2, 3].map(() => t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: alice.token, payload: { name: 'Race' } })),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([201, 409, 409]);
    const loser = results.find((r) => r.statusCode === 409)!;
    expect(loser.json()).toEqual({ error_msg: 'Table Race already exists.' });
    const names = (await workspaces(alice)).find((w) => w.type === 'personal')!.table_list.filter((b: { name: string }) => b.name === 'Race');
    expect(names).toHaveLength(1);
    // Another user may use the same name in their own workspace.
    expect((await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: bob.token, payload: { name: 'Race' } })).statusCode).toBe(201);
  });

  it('renames and deletes with the contract\'s errors', async () => {
    const base = await createBase(t, alice, 'Rename me');
    const ws = `/api/v2.1/workspace/${base.workspaceId}/dtable/`;
    const renamed = await t.request({ method: 'PUT', url: ws, token: alice.token, payload: { name: 'Rename me', new_name: 'Renamed' } });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().table).toMatchObject({ name: 'Renamed', uuid: base.uuid });
    const clash = await t.request({ method: 'PUT', url: ws, token: alice.token, payload: { name: 'Renamed', new_name: 'Projects' } });
    expect(clash.statusCode).toBe(409);
    const missing = await t.request({ method: 'PUT', url: ws, token: alice.token, payload: { name: 'Nope', new_name: 'X' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error_msg: 'dtable Nope not found.' });
    const badNew = await t.request({ method: 'PUT', url: ws, token: alice.token, payload: { name: 'Renamed', new_name: 'a/b' } });
    expect(badNew.statusCode).toBe(400);
    const noWorkspace = await t.request({ method: 'PUT', url: '/api/v2.1/workspace/7777/dtable/', token: alice.token, payload: { name: 'Renamed', new_name: 'X' } });
    expect(noWorkspace.json()).toEqual({ error_msg: 'Workspace 7777 not found.' });
    const notNumeric = await t.request({ method: 'DELETE', url: '/api/v2.1/workspace/abc/dtable/', token: alice.token, payload: { name: 'Renamed' } });
    expect(notNumeric.statusCode).toBe(404);
    const byBob = await t.request({ method: 'DELETE', url: ws, token: bob.token, payload: { name: 'Renamed' } });
    expect(byBob.statusCode).toBe(403);
    expect(byBob.json()).toEqual({ error_msg: 'Permission denied.' });
    const noName = await t.request({ method: 'DELETE', url: ws, token: alice.token, payload: {} });
    expect(noName.statusCode).toBe(400);
    const del = await t.request({ method: 'DELETE', url: ws, token: alice.token, payload: { name: 'Renamed' } });
    expect(del.json()).toEqual({ success: true });
    const again = await t.request({ method: 'DELETE', url: ws, token: alice.token, payload: { name: 'Renamed' } });
    expect(again.statusCode).toBe(404);
  });

  it('lets a shared admin rename but only the owner delete', async () => {
    const base = await createBase(t, alice, 'Admin shared');
    await t.request({ method: 'POST', url: basePath(base, 'share/'), token: alice.token, payload: { email: bob.email, permission: 'admin' } });
    const ws = `/api/v2.1/workspace/${base.workspaceId}/dtable/`;
    const rename = await t.request({ method: 'PUT', url: ws, token: bob.token, payload: { name: 'Admin shared', new_name: 'Admin shared 2' } });
    expect(rename.statusCode).toBe(200);
    expect(rename.json().table.modifier).toBe('Bob');
    const del = await t.request({ method: 'DELETE', url: ws, token: bob.token, payload: { name: 'Admin shared 2' } });
    expect(del.statusCode).toBe(403);
  });
});
