import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

// Issue 33: a table-scoped token's comments are those of its tables' rows — listed, counted, added,
// edited and deleted there; a row or comment of another table is 403 naming the table. Both spellings
// of the scope (table name, table id) are tried, with the token used through its Base-Token.

describe.each(DIALECTS)('comments under a table scope (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  const ids = { table1: '', secret: '', row1: '', rowSecret: '', comment1: 0, commentSecret: 0 };
  const tokens: Record<string, string> = {};

  const gw = (token: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: object) =>
    t.app.inject({
      method,
      url: path.startsWith('/') ? path : `/api-gateway/api/v2/dtables/${base.uuid}/${path}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload } : {}),
    });
  const refusedFor = (res: { statusCode: number; body: string; json(): { error_msg: string } }, table: string) => {
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json()).toEqual({ error_msg: `The token's scope lacks the table ${table}.` });
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    base = await createBase(t, owner, 'Comment scope base');
    const own = await baseToken(t, owner, base);
    expect((await gw(own, 'POST', 'tables/', { table_name: 'Secret' })).statusCode).toBe(200);
    const tables = (await gw(own, 'GET', 'metadata/')).json().metadata.tables as Array<{ _id: string; name: string }>;
    ids.table1 = tables.find((x) => x.name === 'Table1')!._id;
    ids.secret = tables.find((x) => x.name === 'Secret')!._id;
    for (const [table_name, key] of [['Table1', 'row1'], ['Secret', 'rowSecret']] as const) {
      const res = await gw(own, 'POST', 'rows/', { table_name, rows: [{ Name: `row of ${table_name}` }] });
      ids[key] = res.json().row_ids[0]._id;
    }
    for (const [table, row, text] of [[ids.table1, ids.row1, 'visible remark'], [ids.secret, ids.rowSecret, 'secret remark']] as const) {
      expect((await gw(own, 'POST', 'comments/', { table_id: table, row_id: row, comment: text })).statusCode).toBe(200);
    }
    const all = (await gw(own, 'GET', 'comments-within-days/')).json().comments as Array<{ id: number; comment: string }>;
    ids.comment1 = all.find((c) => c.comment === 'visible remark')!.id;
    ids.commentSecret = all.find((c) => c.comment === 'secret remark')!.id;
    const scopes: Record<string, object> = {
      by_name: { tables: ['Table1'], operations: ['comments', 'read_rows'] },
      by_id: { tables: [ids.table1], operations: ['comments'] },
      no_comments: { tables: ['Table1'], operations: ['read_rows'] },
      unscoped: {},
    };
    for (const [app_name, scope] of Object.entries(scopes)) {
      const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name, permission: 'rw', ...scope } });
      expect(created.statusCode, created.body).toBe(201);
      const issued = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: created.json().api_token });
      tokens[app_name] = issued.json().access_token;
    }
  });
  afterAll(() => t.close());

  describe.each(['by_name', 'by_id'])('a token scoped to Table1 %s', (name) => {
    const token = () => tokens[name]!;

    it("lists and counts only its tables' comments", async () => {
      const within = await gw(token(), 'GET', 'comments-within-days/');
      expect(within.statusCode, within.body).toBe(200);
      expect(within.json().comments.map((c: { comment: string }) => c.comment)).toEqual(['visible remark']);
      const byRow = await gw(token(), 'GET', `comments/?row_id=${ids.row1}`);
      expect(byRow.json().map((c: { comment: string }) => c.comment)).toEqual(['visible remark']);
      // Its table by id, whichever way the scope spells it.
      const byTable = await gw(token(), 'GET', `comments/?table_id=${ids.table1}`);
      expect(byTable.statusCode, byTable.body).toBe(200);
      expect(byTable.json().map((c: { comment: string }) => c.comment)).toEqual(['visible remark']);
      expect((await gw(token(), 'GET', `comments-count/?row_id=${ids.row1}`)).json()).toEqual({ count: 1 });
      const perRow = await gw(token(), 'GET', `/api/v2.1/dtables/${base.uuid}/rows-comments-num/`);
      expect(perRow.statusCode, perRow.body).toBe(200);
      expect(perRow.json()).toEqual({ rows_comments_num: { [ids.row1]: 1 } });
      const one = await gw(token(), 'GET', `comments/${ids.comment1}/`);
      expect(one.json().comment).toBe('visible remark');
    });

    it('refuses a row, table or comment of another table, naming the table', async () => {
      refusedFor(await gw(token(), 'GET', `comments/?row_id=${ids.rowSecret}`), ids.secret);
      refusedFor(await gw(token(), 'GET', `comments/?table_id=${ids.secret}`), ids.secret);
      refusedFor(await gw(token(), 'GET', `comments-count/?row_id=${ids.rowSecret}`), ids.secret);
      refusedFor(await gw(token(), 'GET', `comments/${ids.commentSecret}/`), ids.secret);
      refusedFor(await gw(token(), 'PUT', `comments/${ids.commentSecret}/`, { comment: 'overwritten' }), ids.secret);
      refusedFor(await gw(token(), 'DELETE', `comments/${ids.commentSecret}/`), ids.secret);
      refusedFor(await gw(token(), 'POST', 'comments/', { table_id: ids.secret, row_id: ids.rowSecret, comment: 'sneaky' }), ids.secret);
      refusedFor(await gw(token(), 'POST', `/api/v2.1/dtables/${base.uuid}/comments/`, { table_id: ids.secret, row_id: ids.rowSecret, comment: 'sneaky' }), ids.secret);
      // Nothing changed behind the refusals.
      const all = (await gw(tokens.unscoped!, 'GET', 'comments-within-days/')).json().comments.map((c: { comment: string }) => c.comment);
      expect(all).toContain('secret remark');
      expect(all).not.toContain('sneaky');
    });

    it("adds, edits and deletes comments of its tables' rows", async () => {
      const text = `added by ${name}`;
      expect((await gw(token(), 'POST', 'comments/', { table_id: ids.table1, row_id: ids.row1, comment: text })).statusCode).toBe(200);
      const mine = (await gw(token(), 'GET', `comments/?row_id=${ids.row1}`)).json().find((c: { comment: string }) => c.comment === text);
      expect((await gw(token(), 'PUT', `comments/${mine.id}/`, { comment: `${text}, edited` })).statusCode).toBe(200);
      expect((await gw(token(), 'DELETE', `comments/${mine.id}/`)).statusCode).toBe(200);
      const web = await gw(token(), 'POST', `/api/v2.1/dtables/${base.uuid}/comments/`, { table_id: ids.table1, row_id: ids.row1, comment: `${text} (web)` });
      expect(web.statusCode, web.body).toBe(200);
      const added = (await gw(token(), 'GET', `comments/?row_id=${ids.row1}`)).json().find((c: { comment: string }) => c.comment === `${text} (web)`);
      expect((await gw(token(), 'DELETE', `comments/${added.id}/`)).statusCode).toBe(200);
    });
  });

  it('keeps the comments operation check for a table-scoped token', async () => {
    const res = await gw(tokens.no_comments!, 'GET', `comments/?row_id=${ids.row1}`);
    expect(res.statusCode).toBe(403);
    expect(res.json().error_msg).toMatch(/operation comments/);
  });

  it('shows an unscoped token every table', async () => {
    const within = (await gw(tokens.unscoped!, 'GET', 'comments-within-days/')).json().comments.map((c: { comment: string }) => c.comment);
    expect(within).toEqual(expect.arrayContaining(['visible remark', 'secret remark']));
    expect((await gw(tokens.unscoped!, 'GET', `comments/?row_id=${ids.rowSecret}`)).statusCode).toBe(200);
  });
});
