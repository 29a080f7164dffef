import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { READ_ONLY_ROLES, WRITE_ROLES, roleSet, type GatewayRole, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, through, type Gateway } from '../http/rows.fixtures.js';

describe.each(DIALECTS)('row comments (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;
  let owner: TestUser;
  let tableId: string;
  let rowA: string;
  let rowB: string;

  const count = async () => Number((await t.container.db.selectFrom('row_comments').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const notices = (user: TestUser) =>
    t.container.db.selectFrom('notifications').selectAll().where('user_id', '=', user.id).where('msg_type', '=', 'comment').execute();
  const post = (payload: unknown, role: GatewayRole = 'owner') => g.call('POST', 'comments/', payload, roles.tokens[role]);
  const list = async (query: string, role: GatewayRole = 'owner') => {
    const res = await g.call('GET', `comments/?${query}`, undefined, roles.tokens[role]);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Array<Record<string, unknown>>>();
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    const base = await createBase(t, owner);
    roles = await roleSet(t, owner, base);
    g = through(t, { owner, base, token: roles.tokens.owner });
    await addTable(g, 'Tasks', [{ column_name: 'Title', column_type: 'text' }]);
    tableId = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'Tasks')._id;
    const ids = await appendRows(g, 'Tasks', [{ Title: 'a' }, { Title: 'b' }]);
    rowA = ids[0]!;
    rowB = ids[1]!;
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await t.container.db.deleteFrom('row_comments').execute();
    await t.container.db.deleteFrom('notifications').execute();
  });

  it('adds comments and lists a row’s newest first, paged; a table’s with table_id', async () => {
    for (const [i, row] of [rowA, rowA, rowB, rowA].entries()) {
      t.clock.advance(1000);
      const res = await post({ comment: `c${i}`, row_id: row, table_id: tableId });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true });
    }
    const all = await list(`row_id=${rowA}`);
    expect(all.map((c) => c.comment)).toEqual(['c3', 'c1', 'c0']);
    expect(all[0]).toEqual({
      id: expect.any(Number),
      author: owner.virtualId,
      comment: 'c3',
      dtable_uuid: g.base.uuid,
      table_id: tableId,
      row_id: rowA,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: all[0]!.created_at,
      resolved: 0,
    });
    expect((await list(`row_id=${rowA}&start=1&limit=1`)).map((c) => c.comment)).toEqual(['c1']);
    expect((await list(`table_id=${tableId}&limit=3`)).map((c) => c.comment)).toEqual(['c3', 'c2', 'c1']);
    for (const [row, n] of [[rowA, 3], [rowB, 1], ['nope', 0]] as const) {
      const counted = await g.call('GET', `comments-count/?row_id=${row}`, undefined, roles.tokens.link);
      expect(counted.json()).toEqual({ count: n });
    }
    expect((await g.call('GET', 'comments-count/')).statusCode).toBe(400);
    const one = await g.call('GET', `comments/${all[2]!.id}/`);
    expect(one.json()).toMatchObject({ comment: 'c0', row_id: rowA });
  });

  it('comments-within-days lists the base’s comments of the last days, newest first', async () => {
    await post({ comment: 'old', row_id: rowA, table_id: tableId });
    // Five days ago (moving the clock would expire the Base-Tokens).
    await t.container.db.updateTable('row_comments').set({ created_at: t.clock.now() - 5 * 86_400_000 }).execute();
    await post({ comment: 'new', row_id: rowB, table_id: tableId });
    await post({ comment: 'newer', row_id: rowA, table_id: tableId });
    const recent = await g.call('GET', 'comments-within-days/?days=2', undefined, roles.tokens.r);
    expect(recent.statusCode, recent.body).toBe(200);
    expect(recent.json().comments.map((c: { comment: string }) => c.comment)).toEqual(['newer', 'new']);
    const week = await g.call('GET', 'comments-within-days/?days=7');
    expect(week.json().comments.map((c: { comment: string }) => c.comment)).toEqual(['newer', 'new', 'old']);
    for (const days of ['0', '366', 'x', '-1']) {
      const res = await g.call('GET', `comments-within-days/?days=${days}`);
      expect(res.statusCode, days).toBe(400);
      expect(res.json()).toHaveProperty('error_msg');
    }
  });

  it('POST /api/v2.1/dtables/{uuid}/comments/ with an Account-Token, for anyone with access', async () => {
    for (const who of ['owner', 'admin', 'rw', 'r'] as const) {
      const res = await t.request({ method: 'POST', url: `/api/v2.1/dtables/${g.base.uuid}/comments/`, token: roles.users[who].token, payload: { comment: who, row_id: rowA, table_id: tableId } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true });
    }
    expect((await list(`row_id=${rowA}`)).map((c) => [c.comment, c.author])).toEqual(
      (['r', 'rw', 'admin', 'owner'] as const).map((who) => [who, roles.users[who].virtualId]),
    );
    const stranger = await t.request({ method: 'POST', url: `/api/v2.1/dtables/${g.base.uuid}/comments/`, token: roles.users.none.token, payload: { comment: 'x', row_id: rowA, table_id: tableId } });
    expect(stranger.statusCode).toBe(403);
    const unknown = await t.request({ method: 'POST', url: `/api/v2.1/dtables/00000000-0000-0000-0000-000000000000/comments/`, token: owner.token, payload: { comment: 'x', row_id: rowA, table_id: tableId } });
    expect(unknown.statusCode).toBe(404);
    const anonymous = await t.request({ method: 'POST', url: `/api/v2.1/dtables/${g.base.uuid}/comments/`, payload: { comment: 'x', row_id: rowA, table_id: tableId } });
    expect([401, 403]).toContain(anonymous.statusCode);
    expect(await count()).toBe(4);
  });

  it.each(['owner', 'admin', 'rw', 'r'] as const)('a user’s Base-Token (%s) reads and writes comments', async (role) => {
    expect((await post({ comment: role, row_id: rowA, table_id: tableId }, role)).statusCode).toBe(200);
    expect((await list(`row_id=${rowA}`, role)).map((c) => c.author)).toEqual([roles.users[role].virtualId]);
  });

  it.each(['api-r', 'link'] as const)('a read-only Base-Token without a user (%s) reads but cannot write', async (role) => {
    await post({ comment: 'seed', row_id: rowA, table_id: tableId });
    expect((await list(`row_id=${rowA}`, role)).length).toBe(1);
    const res = await post({ comment: role, row_id: rowA, table_id: tableId }, role);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toHaveProperty('error_msg');
    expect(await count()).toBe(1);
  });

  it('a read-write API-Token’s Base-Token writes as the API-Token’s creator', async () => {
    const res = await post({ comment: 'from a script', row_id: rowA, table_id: tableId }, 'api-rw');
    expect(res.statusCode, res.body).toBe(200);
    expect((await list(`row_id=${rowA}`)).map((c) => [c.comment, c.author])).toEqual([['from a script', owner.virtualId]]);
  });

  it('only the author edits or deletes a comment', async () => {
    await post({ comment: 'mine', row_id: rowA, table_id: tableId }, 'rw');
    const [c] = await list(`row_id=${rowA}`);
    const others = [...WRITE_ROLES, ...READ_ONLY_ROLES].filter((r) => r !== 'rw');
    for (const role of others) {
      expect((await g.call('PUT', `comments/${c!.id}/`, { comment: 'hijack' }, roles.tokens[role])).statusCode, role).toBe(403);
      expect((await g.call('DELETE', `comments/${c!.id}/`, undefined, roles.tokens[role])).statusCode, role).toBe(403);
    }
    expect((await list(`row_id=${rowA}`))[0]!.comment).toBe('mine');

    t.clock.advance(5000);
    const put = await g.call('PUT', `comments/${c!.id}/`, { comment: 'edited' }, roles.tokens.rw);
    expect(put.statusCode, put.body).toBe(200);
    const [edited] = await list(`row_id=${rowA}`);
    expect(edited).toMatchObject({ comment: 'edited', created_at: c!.created_at });
    expect(edited!.updated_at).not.toBe(c!.created_at);
    const del = await g.call('DELETE', `comments/${c!.id}/`, undefined, roles.tokens.rw);
    expect(del.json()).toEqual({ success: true });
    expect(await count()).toBe(0);
    expect((await g.call('DELETE', `comments/${c!.id}/`, undefined, roles.tokens.rw)).statusCode).toBe(404);
  });

  it('an @ mention of a user with access notifies them, not strangers and not the author', async () => {
    const { rw, r, none } = roles.users;
    const text = `@${rw.email} please look, cc @${r.virtualId} @${none.email} @${owner.email} @nobody@example.com`;
    expect((await post({ comment: text, row_id: rowA, table_id: tableId })).statusCode).toBe(200);
    for (const user of [rw, r]) {
      const [n, ...more] = await notices(user);
      expect(more).toEqual([]);
      expect(JSON.parse(n!.detail)).toEqual({ author: owner.virtualId, comment: text, row_id: rowA, table_id: tableId });
      expect(n!.email_due_at).not.toBeNull();
    }
    expect(await notices(none)).toEqual([]);
    expect(await notices(owner)).toEqual([]);
  });

  it('bad inputs are 4xx with error_msg and change nothing', async () => {
    const bad: Array<[unknown, number]> = [
      [{ comment: '', row_id: rowA, table_id: tableId }, 400],
      [{ comment: '   ', row_id: rowA, table_id: tableId }, 400],
      [{ comment: 42, row_id: rowA, table_id: tableId }, 400],
      [{ comment: 'x'.repeat(10_001), row_id: rowA, table_id: tableId }, 400],
      [{ comment: 'x', table_id: tableId }, 400],
      [{ comment: 'x', row_id: rowA }, 400],
      [{ comment: 'x', row_id: 'nope', table_id: tableId }, 404],
      [{ comment: 'x', row_id: rowA, table_id: '0000' }, 404],
    ];
    for (const [payload, status] of bad) {
      const res = await post(payload);
      expect(res.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(status);
      expect(res.json()).toHaveProperty('error_msg');
    }
    for (const query of ['', 'row_id=', `row_id=${rowA}&limit=0`, `row_id=${rowA}&limit=101`, `row_id=${rowA}&start=-1`, `row_id=${rowA}&limit=x`]) {
      const res = await g.call('GET', `comments/?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toHaveProperty('error_msg');
    }
    expect((await g.call('GET', 'comments/abc/')).statusCode).toBe(400);
    expect((await g.call('GET', 'comments/999999/')).statusCode).toBe(404);
    await post({ comment: 'keep', row_id: rowA, table_id: tableId });
    const [c] = await list(`row_id=${rowA}`);
    expect((await g.call('PUT', `comments/${c!.id}/`, { comment: '' })).statusCode).toBe(400);
    expect((await g.call('PUT', `comments/${c!.id}/`, {})).statusCode).toBe(400);
    expect((await list(`row_id=${rowA}`))[0]!.comment).toBe('keep');
    expect(await count()).toBe(1);
  });

  it('a comment of another base is not found through this base', async () => {
    const other = await createBase(t, owner);
    const og = through(t, { owner, base: other, token: '' });
    await post({ comment: 'here', row_id: rowA, table_id: tableId });
    const [c] = await list(`row_id=${rowA}`);
    const token = await baseToken(t, owner, other);
    expect((await og.call('GET', `comments/${c!.id}/`, undefined, token)).statusCode).toBe(404);
    expect((await og.call('DELETE', `comments/${c!.id}/`, undefined, token)).statusCode).toBe(404);
    expect(await count()).toBe(1);
  });
});
