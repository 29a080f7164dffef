import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createBase, createTestApp, type TestApp, type TestBase } from '../helpers/index.js';
import { listen, rawRequest } from '../helpers/raw-http.js';
import { baseWithRoles, roleSet, type GatewayRole, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, through } from '../http/rows.fixtures.js';

/*
 * The `/api/v2.1/dtables/{base_uuid}/…` routes the official clients call with a Base-Token (issue #26 item 1),
 * with the headers they send: dtable-sdk's dtable-web-proxy-api (`Authorization: Token <base token>`, axios),
 * the Python SDK (`Token` and `Content-Type: application/json`), the PHP SDK (`Bearer`).
 */
const sdkHeaders = (token: string) => ({ Authorization: `Token ${token}`, Accept: 'application/json, text/plain, */*' });
const pythonHeaders = (token: string) => ({ Authorization: `Token ${token}`, 'Content-Type': 'application/json' });
const phpHeaders = (token: string) => ({ Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' });

const ALL_ROLES: GatewayRole[] = ['owner', 'admin', 'rw', 'r', 'api-rw', 'api-r', 'link'];

describe.each(DIALECTS)('web-API routes of a base take its Base-Token (%s)', (dialect) => {
  let t: TestApp;
  let server: string;
  let base: TestBase;
  let other: TestBase;
  let roles: RoleSet;
  let otherToken: string;
  let tableId: string;
  let rowId: string;

  const commentCount = async () => Number((await t.container.db.selectFrom('row_comments').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    server = await listen(t);
    const set = await baseWithRoles(t);
    const owner = set.owner;
    ({ base, roles } = set);
    other = await createBase(t, owner, 'Other');
    otherToken = (await roleSet(t, owner, other)).tokens.owner;
    const g = through(t, { owner, base, token: roles.tokens.owner });
    tableId = (await addTable(g, 'Tasks', [{ column_name: 'Title', column_type: 'text' }]))._id;
    rowId = (await appendRows(g, 'Tasks', [{ Title: 'a' }]))[0]!;
  });
  afterAll(() => t.close());

  describe('GET /api/v2.1/dtables/{uuid}/related-users/', () => {
    it.each(ALL_ROLES)('dtable-sdk and the Python SDK with a Base-Token of %s', async (role) => {
      for (const headers of [sdkHeaders(roles.tokens[role]), pythonHeaders(roles.tokens[role])]) {
        const res = await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/related-users/`, headers);
        expect(res.status, res.body).toBe(200);
        const body = res.json<{ user_list: Array<{ email: string }>; app_user_list: unknown[] }>();
        expect(body.user_list.map((u) => u.email).sort()).toEqual((['owner', 'admin', 'rw', 'r'] as const).map((r) => roles.users[r].virtualId).sort());
        expect(body.app_user_list).toEqual([]);
      }
    });

    it('a Base-Token of another base is refused; a bad token is 401 as before; an Account-Token still works', async () => {
      const foreign = await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/related-users/`, sdkHeaders(otherToken));
      expect(foreign.status).toBe(401);
      expect(foreign.json()).toEqual({ detail: 'Invalid token' });
      const bad = await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/related-users/`, sdkHeaders('a.b.c'));
      expect(bad.status).toBe(401);
      expect(bad.json()).toEqual({ detail: 'Invalid token' });
      const none = await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/related-users/`, {});
      expect(none.status).toBe(403);
      const account = await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/related-users/`, pythonHeaders(roles.users.r.token));
      expect(account.status).toBe(200);
      const stranger = await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/related-users/`, pythonHeaders(roles.users.none.token));
      expect(stranger.status).toBe(403);
    });
  });

  describe('GET /api/v2.1/dtables/{uuid}/departments/', () => {
    it.each(ALL_ROLES)('answers no departments to a Base-Token of %s', async (role) => {
      const res = await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/departments/`, sdkHeaders(roles.tokens[role]));
      expect(res.status, res.body).toBe(200);
      expect(res.json()).toEqual({ departments: [] });
    });

    it('to users with access only; another base’s token or a stranger is refused', async () => {
      expect((await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/departments/`, sdkHeaders(roles.users.r.token))).status).toBe(200);
      expect((await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/departments/`, sdkHeaders(roles.users.none.token))).status).toBe(403);
      expect((await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/departments/`, sdkHeaders(otherToken))).status).toBe(401);
      expect((await rawRequest(server, 'GET', `/api/v2.1/dtables/00000000-0000-0000-0000-000000000000/departments/`, sdkHeaders(roles.users.r.token))).status).toBe(404);
    });
  });

  describe('POST /api/v2.1/dtables/{uuid}/comments/ and GET …/rows-comments-num/', () => {
    it.each(['owner', 'admin', 'rw', 'r', 'api-rw'] as GatewayRole[])('a Base-Token of %s adds a comment (the Python client’s JSON body)', async (role) => {
      const before = await commentCount();
      const res = await rawRequest(server, 'POST', `/api/v2.1/dtables/${base.uuid}/comments/`, pythonHeaders(roles.tokens[role]), JSON.stringify({ comment: `by ${role}`, row_id: rowId, table_id: tableId }));
      expect(res.status, res.body).toBe(200);
      expect(res.json()).toEqual({ success: true });
      expect(await commentCount()).toBe(before + 1);
      const author = role === 'api-rw' ? roles.users.owner.virtualId : roles.users[role as 'owner'].virtualId;
      const latest = await t.container.db.selectFrom('row_comments').select(['author', 'comment']).orderBy('id', 'desc').executeTakeFirstOrThrow();
      expect(latest).toEqual({ author, comment: `by ${role}` });
    });

    it.each(['api-r', 'link'] as GatewayRole[])('a Base-Token of %s cannot write one, and nothing is written', async (role) => {
      const before = await commentCount();
      const res = await rawRequest(server, 'POST', `/api/v2.1/dtables/${base.uuid}/comments/`, pythonHeaders(roles.tokens[role]), JSON.stringify({ comment: 'x', row_id: rowId, table_id: tableId }));
      expect(res.status).toBe(403);
      expect(res.json()).toHaveProperty('error_msg');
      expect(await commentCount()).toBe(before);
    });

    it('another base’s Base-Token cannot write into this base', async () => {
      const before = await commentCount();
      const res = await rawRequest(server, 'POST', `/api/v2.1/dtables/${base.uuid}/comments/`, pythonHeaders(otherToken), JSON.stringify({ comment: 'x', row_id: rowId, table_id: tableId }));
      expect(res.status).toBe(401);
      expect(await commentCount()).toBe(before);
    });

    it('the PHP SDK’s getNumberOfComments counts per row, with a Base-Token or an Account-Token', async () => {
      const expected = { rows_comments_num: { [rowId!]: await commentCount() } };
      for (const headers of [phpHeaders(roles.tokens['api-r']), phpHeaders(roles.tokens.link), phpHeaders(roles.users.r.token)]) {
        const res = await rawRequest(server, 'GET', `/api/v2.1/dtables/${base.uuid}/rows-comments-num/`, headers);
        expect(res.status, res.body).toBe(200);
        expect(res.json()).toEqual(expected);
      }
      const otherBase = await rawRequest(server, 'GET', `/api/v2.1/dtables/${other.uuid}/rows-comments-num/`, phpHeaders(otherToken));
      expect(otherBase.json()).toEqual({ rows_comments_num: {} });
    });
  });
});
