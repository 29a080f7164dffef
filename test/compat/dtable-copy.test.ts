import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { roleSet, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, through, type Gateway } from '../http/rows.fixtures.js';

describe.each(DIALECTS)('POST /api/v2.1/dtable-copy/ (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;
  let source: TestBase;
  const personal = new Map<string, number>();

  const copy = (token: string | undefined, payload: Record<string, unknown>) =>
    t.request({ method: 'POST', url: '/api/v2.1/dtable-copy/', ...(token === undefined ? {} : { token }), payload });
  const workspaceOf = async (user: TestUser) => {
    if (!personal.has(user.email)) {
      const res = await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: user.token });
      personal.set(user.email, res.json().workspace_list[0].id);
    }
    return personal.get(user.email)!;
  };
  const baseCount = async () => Number((await t.container.db.selectFrom('bases').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const owner = await createUser(t);
    source = await createBase(t, owner, 'Projects');
    roles = await roleSet(t, owner, source);
    g = through(t, { owner, base: source, token: roles.tokens.owner });
    await addTable(g, 'People', [{ column_name: 'Name', column_type: 'text' }, { column_name: 'Age', column_type: 'number' }]);
    await addTable(g, 'Books', [{ column_name: 'Title', column_type: 'text' }]);
    const link = await g.call('POST', 'columns/', { table_name: 'People', column_name: 'Books', column_type: 'link', column_data: { table: 'People', other_table: 'Books' } });
    expect(link.statusCode, link.body).toBe(200);
    const people = await appendRows(g, 'People', [{ Name: 'Ada', Age: 36 }, { Name: 'Alan', Age: 41 }]);
    const books = await appendRows(g, 'Books', [{ Title: 'Notes' }]);
    const linked = await g.call('POST', 'links/', { link_id: link.json().data.link_id, table_name: 'People', other_table_name: 'Books', other_rows_ids_map: { [people[0]!]: [books[0]] } });
    expect(linked.statusCode, linked.body).toBe(200);
    const webhook = await t.request({ method: 'POST', url: basePath(source, 'webhooks/'), token: owner.token, payload: { url: 'https://hooks.example.com/x' } });
    expect(webhook.statusCode, webhook.body).toBeLessThan(300);
  });
  afterAll(() => t.close());

  it('copies structure, rows and links into the caller\'s workspace; not tokens, shares or webhooks', async () => {
    const reader = roles.users.r;
    const res = await copy(reader.token, { src_workspace_id: source.workspaceId, name: 'Projects', dst_workspace_id: await workspaceOf(reader) });
    expect(res.statusCode, res.body).toBe(200);
    const dtable = res.json().dtable;
    expect(dtable).toMatchObject({ name: 'Projects', workspace_id: await workspaceOf(reader), is_encrypted: false, in_storage: true, color: null });
    expect(dtable.uuid).not.toBe(source.uuid);
    expect(Object.keys(dtable).sort()).toEqual(
      Object.keys((await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: reader.token, payload: { name: 'shape' } })).json().table).sort(),
    );

    const copied: TestBase = { id: dtable.id, uuid: dtable.uuid, name: dtable.name, workspaceId: dtable.workspace_id };
    const c = through(t, { owner: reader, base: copied, token: await baseToken(t, reader, copied) });
    const meta = (await c.call('GET', 'metadata/')).json().metadata;
    const original = (await g.call('GET', 'metadata/')).json().metadata;
    expect(meta.tables.map((x: { name: string }) => x.name)).toEqual(original.tables.map((x: { name: string }) => x.name));
    const people = (await c.call('GET', 'rows/?table_name=People&convert_keys=true')).json().rows;
    expect(people.map((r: Record<string, unknown>) => [r.Name, r.Age])).toEqual([['Ada', 36], ['Alan', 41]]);
    expect(people[0].Books).toEqual([expect.objectContaining({ display_value: 'Notes' })]);

    // The copy is its own base: a change there leaves the source alone.
    expect((await c.call('PUT', 'rows/', { table_name: 'People', row_id: people[0]._id, row: { Name: 'changed' } })).statusCode).toBe(200);
    expect((await g.call('GET', 'rows/?table_name=People&convert_keys=true')).json().rows[0].Name).toBe('Ada');

    expect((await t.request({ method: 'GET', url: basePath(copied, 'api-tokens/'), token: reader.token })).json().api_tokens).toEqual([]);
    expect((await t.request({ method: 'GET', url: basePath(copied, 'share/'), token: reader.token })).json().user_list).toEqual([]);
    expect((await t.request({ method: 'GET', url: basePath(copied, 'webhooks/'), token: reader.token })).json().webhook_list).toEqual([]);
  });

  it.each(['owner', 'admin', 'rw'] as const)('%s may copy the base into their own workspace', async (role) => {
    const user = roles.users[role];
    const dst = role === 'owner' ? (await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: user.token, payload: { name: 'x' } })).json().table.workspace_id : await workspaceOf(user);
    if (role === 'owner') {
      // The owner's own workspace already holds "Projects": the copies are "Projects (1)", "Projects (2)".
      for (const expected of ['Projects (1)', 'Projects (2)']) {
        const res = await copy(user.token, { src_workspace_id: source.workspaceId, name: 'Projects', dst_workspace_id: dst });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().dtable).toMatchObject({ name: expected, workspace_id: dst });
      }
      // Copying a copy names it after the copy.
      const again = await copy(user.token, { src_workspace_id: source.workspaceId, name: 'Projects (1)', dst_workspace_id: dst });
      expect(again.json().dtable.name).toBe('Projects (1) (1)');
      return;
    }
    const res = await copy(user.token, { src_workspace_id: source.workspaceId, name: 'Projects', dst_workspace_id: dst });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().dtable.workspace_id).toBe(dst);
  });

  it('a user without access gets 403, unknown workspaces and bases 404, and nothing is created', async () => {
    const before = await baseCount();
    const stranger = roles.users.none;
    const mine = await workspaceOf(stranger);
    const cases: [TestUser, Record<string, unknown>, number, unknown][] = [
      [stranger, { src_workspace_id: source.workspaceId, name: 'Projects', dst_workspace_id: mine }, 403, { error_msg: 'Permission denied.' }],
      [stranger, { src_workspace_id: 999999, name: 'Projects', dst_workspace_id: mine }, 404, { error_msg: 'Workspace 999999 not found.' }],
      [stranger, { src_workspace_id: source.workspaceId, name: 'Nope', dst_workspace_id: mine }, 404, { error_msg: 'dtable Nope not found.' }],
      // Readable source, but a workspace the caller does not own.
      [roles.users.rw, { src_workspace_id: source.workspaceId, name: 'Projects', dst_workspace_id: mine }, 403, { error_msg: 'Permission denied.' }],
      [roles.users.rw, { src_workspace_id: source.workspaceId, name: 'Projects', dst_workspace_id: 999999 }, 404, { error_msg: 'Workspace 999999 not found.' }],
      [stranger, { name: 'Projects', dst_workspace_id: mine }, 400, { error_msg: 'src_workspace_id invalid.' }],
      [stranger, { src_workspace_id: 'x', name: 'Projects', dst_workspace_id: mine }, 400, { error_msg: 'src_workspace_id invalid.' }],
      [stranger, { src_workspace_id: source.workspaceId, name: 'Projects', dst_workspace_id: -1 }, 400, { error_msg: 'dst_workspace_id invalid.' }],
      [stranger, { src_workspace_id: source.workspaceId, name: '', dst_workspace_id: mine }, 400, { error_msg: 'name invalid.' }],
      [stranger, { src_workspace_id: source.workspaceId, name: ['Projects'], dst_workspace_id: mine }, 400, { error_msg: 'name invalid.' }],
    ];
    for (const [user, body, status, error] of cases) {
      const res = await copy(user.token, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json()).toEqual(error);
    }
    expect(await baseCount()).toBe(before);
  });

  it('needs an Account-Token: none → 403, a bad one → 401, an API-Token or a Base-Token is not one', async () => {
    const before = await baseCount();
    const body = { src_workspace_id: source.workspaceId, name: 'Projects', dst_workspace_id: await workspaceOf(roles.users.none) };
    expect((await copy(undefined, body)).statusCode).toBe(403);
    expect((await copy('not-a-token', body)).statusCode).toBe(401);
    expect([401, 403]).toContain((await copy(roles.apiTokens.rw, body)).statusCode);
    expect([401, 403]).toContain((await copy(roles.tokens.owner, body)).statusCode);
    expect(await baseCount()).toBe(before);
  });
});
