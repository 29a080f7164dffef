import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

// Issue 33: scoped API-Tokens. A table-driven matrix (calls × scoped tokens, each token used through
// its Base-Token, the SQL endpoint and the file links with the API-Token itself), then expiry,
// rotation, networks behind TRUST_PROXY, the rate budget and bad input.

type Scope = Record<string, unknown>;
const TOKENS: Record<string, Scope> = {
  read: { operations: ['read_rows'] },
  write: { operations: ['write_rows'] },
  structure: { operations: 'structure' }, // a form's comma-separated string
  sql: { operations: ['sql'] },
  comments: { operations: ['comments'] },
  files: { operations: ['files'] },
  table1: { tables: ['Table1'] },
  // Tables and networks together: the table check must not judge the network again without the address.
  table1_net: { tables: ['Table1'], allowed_networks: ['127.0.0.0/8'] },
  unscoped: {},
};

interface Call {
  name: string;
  method: 'GET' | 'POST';
  path: string; // under /api-gateway/api/v2/dtables/{uuid}/, or absolute (API-Token)
  payload?: object | ((token: string) => object);
  /** The tokens that may make the call; every other one gets 403 naming `missing`. */
  allowed: string[];
  missing: RegExp;
}

const ALL_OPS = ['unscoped', 'table1', 'table1_net'];
const CALLS: Call[] = [
  { name: 'list rows', method: 'GET', path: 'rows/?table_name=Table1', allowed: ['read', ...ALL_OPS], missing: /operation read_rows/ },
  { name: 'list rows of another table', method: 'GET', path: 'rows/?table_name=Secret', allowed: ['read', 'unscoped'], missing: /operation read_rows|table Secret/ },
  { name: 'append a row', method: 'POST', path: 'rows/', payload: { table_name: 'Table1', rows: [{}] }, allowed: ['write', ...ALL_OPS], missing: /operation write_rows/ },
  { name: 'read columns', method: 'GET', path: 'columns/?table_name=Table1', allowed: ['read', 'structure', ...ALL_OPS], missing: /operation read_rows or structure/ },
  { name: 'add a column', method: 'POST', path: 'columns/', payload: (token) => ({ table_name: 'Table1', column_name: `c ${token}`, column_type: 'text' }), allowed: ['structure', ...ALL_OPS], missing: /operation structure/ },
  { name: 'SQL on Table1', method: 'POST', path: 'sql/', payload: { sql: 'SELECT * FROM Table1' }, allowed: ['sql', ...ALL_OPS], missing: /operation sql/ },
  { name: 'SQL on another table', method: 'POST', path: 'sql/', payload: { sql: 'SELECT * FROM Secret' }, allowed: ['sql', 'unscoped'], missing: /operation sql|table Secret/ },
  // Comments are filtered by a table scope (tokens-scopes-comments.test.ts), not refused.
  { name: 'comments within days', method: 'GET', path: 'comments-within-days/', allowed: ['comments', ...ALL_OPS], missing: /operation comments/ },
  { name: 'comments of a row', method: 'GET', path: 'comments/?row_id=AAAAAAAAAAAAAAAAAAAAAA', allowed: ['comments', ...ALL_OPS], missing: /operation comments/ },
  { name: 'the whole base', method: 'GET', path: '', allowed: ['read', 'unscoped'], missing: /operation read_rows|every table/ },
  // Deleted tables are no scope's: their names and rows are refused to a table-scoped token.
  { name: 'the table trash', method: 'GET', path: 'trash/tables/', allowed: ['read', 'unscoped'], missing: /operation read_rows|every table/ },
  { name: 'file upload link (API-Token)', method: 'GET', path: '/api/v2.1/dtable/app-upload-link/', allowed: ['files', ...ALL_OPS], missing: /operation files/ },
];

describe.each(DIALECTS)('scoped API-Tokens (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  const apiTokens: Record<string, string> = {};
  const baseTokens: Record<string, string> = {};

  const tokensPath = (suffix = '') => basePath(base, `api-tokens/${suffix}`);
  const create = (payload: object) => t.request({ method: 'POST', url: tokensPath(), token: owner.token, payload });
  const exchange = (apiToken: string, headers: Record<string, string> = {}) =>
    t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: apiToken, headers });
  const gateway = (token: string, method: 'GET' | 'POST', path: string, payload?: object) =>
    t.app.inject({
      method,
      url: path.startsWith('/') ? path : `/api-gateway/api/v2/dtables/${base.uuid}/${path}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload } : {}),
    });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    base = await createBase(t, owner, 'Scoped base');
    const own = await baseToken(t, owner, base);
    expect((await gateway(own, 'POST', 'tables/', { table_name: 'Secret' })).statusCode).toBe(200);
    for (const [name, scope] of Object.entries(TOKENS)) {
      const res = await create({ app_name: name, permission: 'rw', ...scope });
      expect(res.statusCode, res.body).toBe(201);
      apiTokens[name] = res.json().api_token;
      const issued = await exchange(apiTokens[name]!);
      expect(issued.statusCode, issued.body).toBe(200);
      baseTokens[name] = issued.json().access_token;
    }
  });
  afterAll(() => t.close());

  describe.each(CALLS)('$name', (call) => {
    it.each(Object.keys(TOKENS))('with the %s token', async (name) => {
      const token = call.path.startsWith('/') ? apiTokens[name]! : baseTokens[name]!;
      const payload = typeof call.payload === 'function' ? call.payload(name) : call.payload;
      const res = await gateway(token, call.method, call.path, payload);
      if (call.allowed.includes(name)) {
        expect(res.statusCode, res.body).toBe(200);
      } else {
        expect(res.statusCode, res.body).toBe(403);
        expect(res.json().error_msg).toMatch(call.missing);
      }
    });
  });

  it('records the scope in the token list, and a Base-Token cannot outgrow it when the scope changes', async () => {
    const list = await t.request({ method: 'GET', url: tokensPath(), token: owner.token });
    const read = list.json().api_tokens.find((r: { app_name: string }) => r.app_name === 'read');
    expect(read).toMatchObject({ operations: ['read_rows'], permission: 'rw' });
    expect(read.requests_per_day[0].requests).toBeGreaterThanOrEqual(2);
    expect(read.last_client_ip).toBe('127.0.0.1');
    // Widening the scope revokes what was issued under the old one.
    const widened = await t.request({ method: 'PUT', url: tokensPath('read/'), token: owner.token, payload: { operations: ['read_rows', 'sql'] } });
    expect(widened.statusCode, widened.body).toBe(200);
    expect((await gateway(baseTokens.read!, 'GET', 'rows/?table_name=Table1')).statusCode).toBe(403);
    const fresh = (await exchange(apiTokens.read!)).json().access_token;
    expect((await gateway(fresh, 'POST', 'sql/', { sql: 'SELECT * FROM Table1' })).statusCode).toBe(200);
  });

  it("shows a table-scoped token only its tables' operations, activities and trashed rows", async () => {
    const own = await baseToken(t, owner, base);
    for (const table_name of ['Secret', 'Table1']) {
      const marker = `log-${table_name}-marker`;
      const added = await gateway(own, 'POST', 'rows/', { table_name, rows: [{ Name: marker }] });
      expect(added.statusCode, added.body).toBe(200);
      const rowId = added.json().row_ids[0]._id as string;
      const gone = await t.app.inject({ method: 'DELETE', url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/`, headers: { authorization: `Bearer ${own}` }, payload: { table_name, row_ids: [rowId] } });
      expect(gone.statusCode, gone.body).toBe(200);
    }
    for (const path of ['operations/?per_page=100', 'db-operations/?per_page=100', 'activities/?per_page=100', 'trash/rows/?per_page=100']) {
      const all = await gateway(own, 'GET', path);
      expect(all.statusCode, all.body).toBe(200);
      expect(all.body, path).toContain('log-Secret-marker');
      for (const name of ['table1', 'table1_net']) {
        const scoped = await gateway(baseTokens[name]!, 'GET', path);
        expect(scoped.statusCode, scoped.body).toBe(200);
        expect(scoped.body, `${name} ${path}`).toContain('log-Table1-marker');
        expect(scoped.body, `${name} ${path}`).not.toContain('log-Secret-marker');
      }
    }
  });

  it("shows a table-scoped token only its tables' structure in metadata/", async () => {
    const names = async (token: string) => {
      const res = await gateway(token, 'GET', 'metadata/');
      expect(res.statusCode, res.body).toBe(200);
      return res.json().metadata.tables.map((table: { name: string }) => table.name).sort();
    };
    expect(await names(baseTokens.unscoped!)).toEqual(['Secret', 'Table1']);
    expect(await names(baseTokens.table1!)).toEqual(['Table1']);
    expect(await names(baseTokens.table1_net!)).toEqual(['Table1']);
  });

  it('refuses a table-scoped token a snapshot (every table at once)', async () => {
    for (const name of ['table1', 'table1_net']) {
      const res = await gateway(baseTokens[name]!, 'POST', 'snapshot/', {});
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().error_msg).toMatch(/every table/);
    }
    const unscoped = await gateway(baseTokens.unscoped!, 'POST', 'snapshot/', {});
    expect(unscoped.statusCode, unscoped.body).not.toBe(403);
  });

  it("limits the change feed to a table-scoped token's tables, and refuses a table outside them", async () => {
    const own = await baseToken(t, owner, base);
    for (const table_name of ['Secret', 'Table1']) {
      const res = await gateway(own, 'POST', 'rows/', { table_name, rows: [{ Name: `feed ${table_name}` }] });
      expect(res.statusCode, res.body).toBe(200);
    }
    const tablesOf = (res: { json(): { changes: Array<{ table_name?: string }> } }) => new Set(res.json().changes.flatMap((c) => (c.table_name === undefined ? [] : [c.table_name]))); // (structure changes name none)
    for (const name of ['table1', 'table1_net']) {
      const feed = await gateway(baseTokens[name]!, 'GET', 'changes/?limit=1000');
      expect(feed.statusCode, feed.body).toBe(200);
      expect([...tablesOf(feed)]).toEqual(['Table1']);
      const secret = await gateway(baseTokens[name]!, 'GET', 'changes/?tables=Secret');
      expect(secret.statusCode, secret.body).toBe(403);
      expect(secret.json().error_msg).toMatch(/table Secret/);
      expect((await gateway(baseTokens[name]!, 'GET', 'changes/?tables=Table1')).statusCode).toBe(200);
    }
    // The server-sent events form takes the same path.
    const stream = await t.app.inject({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/changes/?tables=Secret`, headers: { authorization: `Bearer ${baseTokens.table1}`, accept: 'text/event-stream' } });
    expect(stream.statusCode).toBe(403);
    // An unscoped reader sees every table; a token without read_rows nothing.
    expect(tablesOf(await gateway(baseTokens.unscoped!, 'GET', 'changes/?limit=1000'))).toEqual(new Set(['Table1', 'Secret']));
    expect((await gateway(baseTokens.sql!, 'GET', 'changes/')).statusCode).toBe(403);
  });

  it('ends at expires_at: no new Base-Token, and the issued one ends with it (manual clock)', async () => {
    const expiresAt = Math.floor(t.clock.now() / 1000) + 3600;
    const res = await create({ app_name: 'expiring', permission: 'r', expires_at: expiresAt });
    expect(res.json().expires_at).toBe(new Date(expiresAt * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00'));
    const issued = (await exchange(res.json().api_token)).json().access_token;
    expect((await gateway(issued, 'GET', 'rows/?table_name=Table1')).statusCode).toBe(200);
    t.clock.advance(3600_000);
    const late = await exchange(res.json().api_token);
    expect(late.statusCode).toBe(403);
    expect(late.json()).toEqual({ error_msg: 'API token expired.' });
    expect((await gateway(issued, 'GET', 'rows/?table_name=Table1')).json()).toEqual({ error_msg: 'Token expired.' });
  });

  it('rotates with an overlap: both secrets work inside the window, only the new one after it', async () => {
    const expiresAt = Math.floor(t.clock.now() / 1000) + 7 * 24 * 3600;
    const created = await create({ app_name: 'rotating', permission: 'r', expires_at: expiresAt });
    const old = created.json().api_token;
    const rotated = await t.request({ method: 'POST', url: tokensPath('rotating/rotate/'), token: owner.token, payload: { overlap_seconds: 600 } });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const fresh = rotated.json().api_token;
    expect(fresh).toMatch(/^[0-9a-f]{40}$/);
    expect(fresh).not.toBe(old);
    expect(rotated.json().previous_expires_at).toBe(new Date(t.clock.now() + 600_000).toISOString().replace(/\.\d{3}Z$/, '+00:00'));
    expect((await exchange(old)).statusCode).toBe(200);
    expect((await exchange(fresh)).statusCode).toBe(200);
    // Inside the window the list shows both expiries, the last access and the last client address.
    const during = (await t.request({ method: 'GET', url: tokensPath(), token: owner.token })).json().api_tokens.find((r: { app_name: string }) => r.app_name === 'rotating');
    expect(during).toMatchObject({
      expires_at: new Date(expiresAt * 1000).toISOString().replace(/\.\d{3}Z$/, '+00:00'),
      previous_expires_at: rotated.json().previous_expires_at,
      last_client_ip: '127.0.0.1',
    });
    expect(during.last_access).toEqual(expect.any(String));
    t.clock.advance(600_000);
    expect((await exchange(old)).json()).toEqual({ error_msg: 'API token expired.' });
    expect((await exchange(fresh)).statusCode).toBe(200);
    const listed = (await t.request({ method: 'GET', url: tokensPath(), token: owner.token })).json().api_tokens;
    const row = listed.find((r: { app_name: string }) => r.app_name === 'rotating');
    expect(row.previous_expires_at).toBeUndefined();
    expect(row.api_token.slice(-4)).toBe(fresh.slice(-4));
    // overlap 0: the old secret ends at once.
    const again = await t.request({ method: 'POST', url: tokensPath('rotating/rotate/'), token: owner.token, payload: {} });
    expect((await exchange(fresh)).statusCode).toBe(403);
    expect((await exchange(again.json().api_token)).statusCode).toBe(200);
  });

  it('spends its own rate budget per minute', async () => {
    const res = await create({ app_name: 'budget', permission: 'r', rate_limit: 2 });
    const issued = (await exchange(res.json().api_token)).json().access_token;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await gateway(issued, 'GET', 'rows/?table_name=Table1'));
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 429]);
    expect(answers[1]!.headers).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '0' });
    expect(answers[2]!.headers['retry-after']).toBe('60');
    // The window follows the app's clock (the reset header is reckoned on it too): a minute on, the budget is whole again.
    t.clock.advance(60_000);
    const next = await gateway(issued, 'GET', 'rows/?table_name=Table1');
    expect(next.statusCode).toBe(200);
    expect(next.headers['x-ratelimit-remaining']).toBe('1');
  });

  it('refuses a client outside allowed_networks, ignoring X-Forwarded-For without TRUST_PROXY', async () => {
    const res = await create({ app_name: 'office', permission: 'r', allowed_networks: ['10.0.0.0/8'] });
    const refused = await exchange(res.json().api_token, { 'x-forwarded-for': '10.1.2.3' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error_msg).toMatch(/127\.0\.0\.1.*allowed networks/);
  });

  it.each([
    [{ operations: ['bogus'] }, /operations invalid/],
    [{ operations: 5 }, /operations invalid/],
    [{ tables: ['a', ''] }, /tables invalid/],
    [{ allowed_networks: ['10.0.0.0/33'] }, /allowed_networks invalid/],
    [{ allowed_networks: 'not-an-ip' }, /allowed_networks invalid/],
    [{ expires_at: 1 }, /future/],
    [{ expires_at: 'tomorrow' }, /expires_at invalid/],
    [{ rate_limit: 0 }, /rate_limit invalid/],
    [{ tables: Array.from({ length: 101 }, (_, i) => `t${i}`) }, /tables invalid/],
  ])('400 for bad scope input %j', async (scope, message) => {
    const res = await create({ app_name: `bad-${Math.random()}`, permission: 'r', ...scope });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_msg).toMatch(message);
  });

  it('400 for a bad rotation overlap', async () => {
    await create({ app_name: 'overlap', permission: 'r' });
    for (const overlap_seconds of [-1, 'x', 31 * 24 * 3600]) {
      const res = await t.request({ method: 'POST', url: tokensPath('overlap/rotate/'), token: owner.token, payload: { overlap_seconds } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error_msg).toMatch(/overlap_seconds invalid/);
    }
  });
});

describe.each(DIALECTS)('allowed networks behind TRUST_PROXY (%s)', (dialect) => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('judges the forwarded client address, on the exchange and on every gateway call', async () => {
    t = await createTestApp(dialect, { TRUST_PROXY: 'true' });
    const owner = await createUser(t);
    const base = await createBase(t, owner, 'Office base');
    const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'office', permission: 'r', allowed_networks: '10.0.0.0/8, 2001:db8::/32' } });
    const apiToken = created.json().api_token;
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    const exchange = (ip: string) => t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: apiToken, headers: from(ip) });
    expect((await exchange('192.0.2.7')).statusCode).toBe(403);
    expect((await exchange('2001:db8::1')).statusCode).toBe(200);
    const issued = await exchange('10.1.2.3');
    expect(issued.statusCode).toBe(200);
    const rows = (ip: string) =>
      t.app.inject({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/rows/?table_name=Table1`, headers: { authorization: `Bearer ${issued.json().access_token}`, ...from(ip) } });
    expect((await rows('10.9.9.9')).statusCode).toBe(200);
    const outside = await rows('198.51.100.1');
    expect(outside.statusCode).toBe(403);
    expect(outside.json().error_msg).toMatch(/198\.51\.100\.1/);
  });
});

describe.each(DIALECTS)('allowed networks without a proxy: the connection address (%s)', (dialect) => {
  let t: TestApp;
  afterAll(() => t?.close());

  it("judges each connection's own address on every gateway call (kept per connection, never shared)", async () => {
    t = await createTestApp(dialect);
    const owner = await createUser(t);
    const base = await createBase(t, owner, 'Lab base');
    const token = async (networks: string, from: string) => {
      const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: `lab ${networks}`, permission: 'r', allowed_networks: networks } });
      const issued = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: created.json().api_token, remoteAddress: from });
      expect(issued.statusCode, issued.body).toBe(200);
      return issued.json().access_token as string;
    };
    const tenNet = await token('10.0.0.0/8', '10.1.2.3');
    const rowsPath = `/api-gateway/api/v2/dtables/${base.uuid}/rows/?table_name=Table1`;
    // Each injected request is a connection of its own, with its own address.
    const rows = (remoteAddress: string) => t.app.inject({ method: 'GET', url: rowsPath, remoteAddress, headers: { authorization: `Token ${tenNet}` } });
    expect((await rows('10.9.9.9')).statusCode).toBe(200);
    const outside = await rows('198.51.100.1');
    expect(outside.statusCode).toBe(403);
    expect(outside.json().error_msg).toMatch(/198\.51\.100\.1/);
    expect((await rows('10.9.9.9')).statusCode).toBe(200);
    // Over real connections from 127.0.0.1: two requests on one kept-alive connection each, for a token that allows it and one that does not.
    const loopback = await token('127.0.0.0/8', '127.0.0.1');
    const origin = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const pool = new Pool(origin, { connections: 1 });
    try {
      const statuses: number[] = [];
      for (const access of [loopback, loopback, tenNet, tenNet, loopback]) {
        const res = await pool.request({ method: 'GET', path: rowsPath, headers: { authorization: `Token ${access}` } });
        await res.body.dump();
        statuses.push(res.statusCode);
      }
      expect(statuses).toEqual([200, 200, 403, 403, 200]);
    } finally {
      await pool.close();
    }
  });
});
