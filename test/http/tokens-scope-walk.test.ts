import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteOptions } from 'fastify';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

// Issue 33: the route-walking scope matrix. Every route the app registers that takes a Base-Token (the
// gateway, and web-API routes with `config.baseToken`) must be classified below — a new one fails the
// walk until it is — and for each the walk asserts the verdict of every scope dimension with a Base-Token
// issued from a scoped API-Token: each missing operation, a table outside the scope (named as
// `table_name=Secret`, or the route refused whole when it spans every table), an expired token, a client
// outside the allowed networks. The API-Token routes are walked with the API-Token itself.
// The positive half: every GET route a token scoped to Table1 may call is called, and its whole answer
// is searched for anything of the table outside the scope (markers planted in its name, columns, rows
// and comments, its id and row ids, the keys and names of Table1's columns that reach it).

type Tables = 'named' | 'all';
/** Route → the operations of which any one admits it ('any': every scope) and how a table scope judges it. */
const GATEWAY: Record<string, [ops: string, tables: Tables]> = {
  'GET /api-gateway/api/v2/dtables/:base_uuid/': ['read_rows', 'all'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/metadata/': ['read_rows|structure', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/rows/': ['read_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/rows/:row_id/': ['read_rows', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/rows/': ['write_rows', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/rows/': ['write_rows', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/rows/': ['write_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/filtered-rows/': ['read_rows', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/filtered-rows/': ['read_rows', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/links/': ['write_rows', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/links/': ['write_rows', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/links/': ['write_rows', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/query-links/': ['read_rows', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/tables/': ['structure', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/tables/duplicate-table/': ['structure', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/tables/': ['structure', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/tables/': ['structure', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/columns/': ['read_rows|structure', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/columns/': ['structure', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/columns/': ['structure', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/columns/': ['structure', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/batch-append-columns/': ['structure', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/views/': ['read_rows|structure', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/views/': ['structure', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/views/:view_name/': ['read_rows|structure', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/views/:view_name/': ['structure', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/views/:view_name/': ['structure', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/column-options/': ['structure', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/column-options/': ['structure', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/column-options/': ['structure', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/column-cascade-settings/': ['structure', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/batch-append-rows/': ['write_rows', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/lock-rows/': ['write_rows', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/unlock-rows/': ['write_rows', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/add-archived-rows/': ['write_rows', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/insert-archived-rows/': ['write_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/formula-functions/': ['read_rows|structure', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/formula-preview/': ['read_rows|structure', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/sql': ['sql', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/changes/': ['read_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/changes/stream/': ['read_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/notifications/': ['any', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/notifications/': ['any', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/notifications/:notification_id/': ['any', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/notifications/': ['any', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/related-users/': ['any', 'named'],
  'GET /api/v2.1/dtables/:base_uuid/related-users/': ['any', 'named'],
  'GET /api/v2.1/dtables/:base_uuid/departments/': ['any', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/ui-toasts': ['write_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/comments/': ['comments', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/comments-count/': ['comments', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/comments-within-days/': ['comments', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/comments/:comment_id/': ['comments', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/comments/': ['comments', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/comments/:comment_id/': ['comments', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/comments/:comment_id/': ['comments', 'named'],
  'POST /api/v2.1/dtables/:base_uuid/comments/': ['comments', 'named'],
  'GET /api/v2.1/dtables/:base_uuid/rows-comments-num/': ['comments', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/operations/': ['read_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/db-operations/': ['read_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/activities/': ['read_rows', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/restore-operations/:op_id/': ['write_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/trash/rows/': ['read_rows', 'named'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/trash/rows/:row_id/': ['write_rows', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/trash/rows/:row_id/': ['write_rows', 'named'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/trash/tables/': ['read_rows', 'all'],
  'PUT /api-gateway/api/v2/dtables/:base_uuid/trash/tables/:trash_id/': ['write_rows', 'named'],
  'DELETE /api-gateway/api/v2/dtables/:base_uuid/trash/tables/:trash_id/': ['write_rows', 'named'],
  'POST /api-gateway/api/v2/dtables/:base_uuid/snapshot/': ['write_rows', 'all'],
  'GET /api-gateway/api/v2/dtables/:base_uuid/asset-download-link/': ['files', 'named'],};

/** Routes taking an API-Token itself (not a Base-Token): the operation they ask ('' for none: the exchange). */
const API_TOKEN: Record<string, string> = {
  'GET /api/v2.1/dtable/app-access-token/': '',
  'GET /api/v2.1/dtable/app-upload-link/': 'files',
  'GET /api/v2.1/dtable/app-download-link/': 'files',
  'DELETE /api/v2.1/dtable/app-asset/': 'files',
};

const OPERATIONS = ['read_rows', 'write_rows', 'structure', 'sql', 'comments', 'files'];

describe.each(DIALECTS)('route-walking scope matrix (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  const routes: Array<{ method: string; url: string; config: Record<string, unknown> }> = [];
  const apiTokens: Record<string, string> = {};
  const baseTokens: Record<string, string> = {};

  const create = async (app_name: string, scope: object) => {
    const res = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name, permission: 'rw', ...scope } });
    expect(res.statusCode, res.body).toBe(201);
    apiTokens[app_name] = res.json().api_token;
    const issued = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: apiTokens[app_name]! });
    if (issued.statusCode === 200) baseTokens[app_name] = issued.json().access_token;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect, {}, {
      onRoute: (r: RouteOptions) => {
        for (const method of [r.method].flat()) if (method !== 'HEAD') routes.push({ method, url: r.url, config: (r.config ?? {}) as Record<string, unknown> });
      },
    });
    owner = await createUser(t);
    base = await createBase(t, owner, 'Walked base');
    // Expiring first: the clock moves past its end before the others are made.
    await create('expired', { expires_at: Math.floor(t.clock.now() / 1000) + 60 });
    t.clock.advance(120_000);
    const sets = new Set(Object.values(GATEWAY).map(([ops]) => ops).filter((ops) => ops !== 'any'));
    for (const ops of [...sets, ...OPERATIONS]) {
      const lacking = OPERATIONS.filter((op) => !ops.split('|').includes(op));
      if (!apiTokens[`without ${ops}`]) await create(`without ${ops}`, { operations: lacking });
    }
    await create('table1', { tables: ['Table1'] });
    await create('office', { allowed_networks: ['127.0.0.0/8'] });
    await plantOutOfScope();
  });

  /** What the positive half searches every answer for. */
  const planted = { table: '', rows: [] as string[], keys: [] as string[], row: '', comment: '' };
  const MARKERS = ['ZQSECRET', 'ZQHIDDEN'];
  /**
   * A table outside the `table1` token's scope, full of markers (name, column, cells, a comment), and in
   * Table1 a link to it, a lookup through the link, a formula over the lookup, and a view filtering on the
   * lookup (its term a marker): Table1's own rows, a comment and a view of its own stay in scope.
   */
  async function plantOutOfScope(): Promise<void> {
    const own = await baseToken(t, owner, base);
    const gw = async (method: 'GET' | 'POST', path: string, payload?: object) => {
      const res = await t.app.inject({ method, url: `/api-gateway/api/v2/dtables/${base.uuid}/${path}`, headers: { authorization: `Bearer ${own}` }, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
      return res.json();
    };
    await gw('POST', 'tables/', { table_name: 'ZQSECRET table', columns: [{ column_name: 'ZQSECRET column', column_type: 'text' }] });
    planted.table = (await gw('GET', 'metadata/')).metadata.tables.find((x: { name: string }) => x.name === 'ZQSECRET table')._id;
    const link = await gw('POST', 'columns/', { table_name: 'Table1', column_name: 'ZQHIDDEN link', column_type: 'link', column_data: { table: 'Table1', other_table: 'ZQSECRET table' } });
    const lookup = await gw('POST', 'columns/', { table_name: 'Table1', column_name: 'ZQHIDDEN lookup', column_type: 'link-formula', column_data: { link_column_key: link.key, formula: 'lookup', level1_linked_column_key: 'ZQSECRET column' } });
    const echo = await gw('POST', 'columns/', { table_name: 'Table1', column_name: 'ZQHIDDEN echo', column_type: 'formula', column_data: { formula: '{ZQHIDDEN lookup}' } });
    planted.keys = [link.key, lookup.key, echo.key];
    const secretRows = (await gw('POST', 'rows/', { table_name: 'ZQSECRET table', rows: [{ 'ZQSECRET column': 'ZQSECRET cell one' }, { 'ZQSECRET column': 'ZQSECRET cell two' }] })).row_ids as Array<{ _id: string }>;
    planted.rows = secretRows.map((r) => r._id);
    planted.row = (await gw('POST', 'rows/', { table_name: 'Table1', rows: [{ Name: 'in scope' }] })).row_ids[0]._id;
    await gw('POST', 'links/', { link_id: link.data.link_id, table_name: 'Table1', other_table_name: 'ZQSECRET table', other_rows_ids_map: { [planted.row]: planted.rows } });
    // A Table1 row linked to the other table, then deleted: the row trash keeps its cells (the lookup's too).
    const doomed = (await gw('POST', 'rows/', { table_name: 'Table1', rows: [{ Name: 'to the trash' }] })).row_ids[0]._id as string;
    await gw('POST', 'links/', { link_id: link.data.link_id, table_name: 'Table1', other_table_name: 'ZQSECRET table', other_rows_ids_map: { [doomed]: [planted.rows[1]] } });
    const gone = await t.app.inject({ method: 'DELETE', url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/`, headers: { authorization: `Bearer ${own}` }, payload: { table_name: 'Table1', row_ids: [doomed] } });
    expect(gone.statusCode, gone.body).toBe(200);
    await gw('POST', 'views/?table_name=Table1', { name: 'Lookup view', filters: [{ column_key: lookup.key, filter_predicate: 'has_any_of', filter_term: ['ZQSECRET term'] }], sorts: [{ column_key: lookup.key, sort_type: 'up' }] });
    await gw('POST', 'comments/', { table_id: planted.table, row_id: planted.rows[0], comment: 'ZQSECRET comment' });
    await gw('POST', 'comments/', { table_id: '0000', row_id: planted.row, comment: 'a comment in scope' });
    planted.comment = String((await gw('GET', 'comments-within-days/')).comments.find((c: { comment: string }) => c.comment === 'a comment in scope').id);
  }
  afterAll(() => t.close());

  const urlOf = (route: string) =>
    route
      .replace(/^\S+ /, '')
      .replace(':base_uuid', base.uuid)
      .replace(/:row_id/g, 'AAAAAAAAAAAAAAAAAAAAAA')
      .replace(/:[a-z_]+/g, '1')
      .replace('*', 'x');
  /** `from`: the client address (the office token allows 127.0.0.0/8 only). */
  const call = (route: string, token: string, query = '', body?: object, from = '127.0.0.1') => {
    const method = route.split(' ')[0] as 'GET';
    const url = urlOf(route) + query;
    expect(token, route).toEqual(expect.any(String));
    return t.app.inject({ method, url, remoteAddress: from, headers: { authorization: `Bearer ${token}` }, ...(body && method !== 'GET' ? { payload: body } : {}) });
  };

  it('classifies every route that takes a Base-Token or an API-Token', () => {
    const taking = routes.filter((r) => r.config.baseAuth || r.config.baseToken || r.url.startsWith('/api-gateway/api/v2/dtables/')).map((r) => `${r.method} ${r.url}`);
    const unclassified = taking.filter((r) => !(r in GATEWAY));
    expect(unclassified, 'routes taking a Base-Token that the matrix does not classify').toEqual([]);
    expect(Object.keys(GATEWAY).filter((r) => !taking.includes(r)), 'classified routes that no longer exist').toEqual([]);
    const names = routes.map((r) => `${r.method} ${r.url}`);
    expect(Object.keys(API_TOKEN).filter((r) => !names.includes(r))).toEqual([]);
  });

  describe.each(Object.entries(GATEWAY))('%s', (route, [ops, tables]) => {
    it('refuses each missing operation, a table outside the scope, an expired token and a foreign network', async () => {
      if (ops !== 'any') {
        const res = await call(route, baseTokens[`without ${ops}`]!);
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json().error_msg).toMatch(/lacks the operation/);
      }
      const outside = await call(route, baseTokens.table1!, tables === 'named' ? `${route.includes('?') ? '&' : '?'}table_name=Secret` : '', { table_name: 'Secret' });
      expect(outside.statusCode, outside.body).toBe(403);
      expect(outside.json().error_msg).toMatch(tables === 'all' ? /every table/ : /lacks the table Secret/);
      const expired = await call(route, baseTokens.expired!);
      expect(expired.statusCode, expired.body).toBe(403);
      expect(expired.json()).toEqual({ error_msg: 'Token expired.' });
      const foreign = await call(route, baseTokens.office!, '', undefined, '192.0.2.9');
      expect(foreign.statusCode, foreign.body).toBe(403);
      expect(foreign.json().error_msg).toMatch(/allowed networks/);
    });
  });

  /** The query of each GET route the positive half calls (default: Table1 by name); the stream never ends (its events are `changes/`'s). */
  const POSITIVE_QUERY: Record<string, string | null> = {
    'GET /api-gateway/api/v2/dtables/:base_uuid/changes/stream/': null,
    'GET /api-gateway/api/v2/dtables/:base_uuid/views/:view_name/': '?table_name=Table1',
    'GET /api-gateway/api/v2/dtables/:base_uuid/comments/': '?row_id=ROW',
    'GET /api-gateway/api/v2/dtables/:base_uuid/comments-count/': '?row_id=ROW',
    'GET /api-gateway/api/v2/dtables/:base_uuid/comments-within-days/': '?days=30',
    'GET /api/v2.1/dtables/:base_uuid/rows-comments-num/': '?table_name=Table1',
    'GET /api-gateway/api/v2/dtables/:base_uuid/changes/': '?limit=1000',
    'GET /api-gateway/api/v2/dtables/:base_uuid/asset-download-link/': '?path=/x.txt',
  };
  const positive = Object.entries(GATEWAY).filter(([route, [, tables]]) => route.startsWith('GET ') && tables === 'named' && POSITIVE_QUERY[route] !== null);

  describe.each(positive)('%s, allowed to a token scoped to Table1', (route) => {
    it('answers nothing of the table outside the scope', async () => {
      const path = route
        .replace(':row_id', planted.row)
        .replace(':view_name', encodeURIComponent('Lookup view'))
        .replace(':comment_id', String(planted.comment));
      const query = (POSITIVE_QUERY[route] ?? '?table_name=Table1').replace('ROW', planted.row);
      const res = await call(path, baseTokens.table1!, query);
      // Answered (a missing asset is 404), not refused.
      expect(res.statusCode, res.body).toBe(route.endsWith('asset-download-link/') ? 404 : 200);
      const body = res.body;
      const named = { markers: MARKERS, 'the table id': [planted.table], 'its row ids': planted.rows, 'hidden column keys': planted.keys.flatMap((k) => [`"${k}"`, `\\"${k}\\"`]) }; // quoted, or inside a JSON text
      const found = Object.entries(named).flatMap(([what, strings]) => (strings.some((x) => body.includes(x)) ? [what] : []));
      expect(found, body.slice(0, 2000)).toEqual([]);
    });
  });

  it('plants what the positive half looks for (the control: an unscoped token reads it)', async () => {
    const own = await baseToken(t, owner, base);
    for (const query of ['?table_name=Table1', '?table_name=ZQSECRET%20table']) {
      const res = await call('GET /api-gateway/api/v2/dtables/:base_uuid/rows/', own, `${query}&convert_keys=true`);
      expect(res.body).toContain('ZQSECRET');
    }
    const views = await call('GET /api-gateway/api/v2/dtables/:base_uuid/views/', own, '?table_name=Table1');
    expect(views.body).toContain('ZQSECRET term');
  });

  describe.each(Object.entries(API_TOKEN))('%s (the API-Token itself)', (route, op) => {
    it('refuses a missing operation, an expired token and a foreign network', async () => {
      if (op) {
        const res = await call(route, apiTokens[`without ${op}`]!);
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json().error_msg).toMatch(/lacks the operation/);
      }
      const expired = await call(route, apiTokens.expired!);
      expect(expired.statusCode, expired.body).toBe(403);
      const foreign = await call(route, apiTokens.office!, '', undefined, '192.0.2.9');
      expect(foreign.statusCode, foreign.body).toBe(403);
    });
  });
});
