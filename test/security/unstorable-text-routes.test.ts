import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

/*
 * NUL and lone surrogates on every route of the OpenAPI document (not a sample): in the query string
 * of every operation and in the JSON body of every operation that takes one, sent with a credential
 * the route accepts, the answer is the text guard's 400 — never a 5xx, never a 2xx.
 */

const BAD = ['a\u0000b', 'a\ud800b', '\udc00x'];
// A lone surrogate cannot be spelled in a URL (its UTF-8 bytes are invalid and decode to U+FFFD).
const QUERY_BAD = ['a%00b', '%00'];

describe.each(DIALECTS)('unstorable text on every OpenAPI route (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;
  let base: TestBase;
  let bt: string;
  let apiToken: string;
  let operations: Array<{ method: string; path: string }>;

  beforeAll(async () => {
    t = await createTestApp(dialect, { RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '0' });
    admin = await createUser(t, { admin: true });
    base = await createBase(t, admin);
    bt = await baseToken(t, admin, base);
    const created = await t.request({
      method: 'POST',
      url: `/api/v2.1/workspace/${base.workspaceId}/dtable/${encodeURIComponent(base.name)}/api-tokens/`,
      token: admin.token,
      payload: { app_name: 'guard', permission: 'rw' },
    });
    apiToken = created.json().api_token as string;
    const doc = (await t.request({ method: 'GET', url: '/api/docs/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).filter((m) => ['get', 'post', 'put', 'delete', 'patch'].includes(m)).map((method) => ({ method: method.toUpperCase(), path })),
    );
  });
  afterAll(() => t.close());

  /** The URL with real parameters where the test has them, and the credential its family takes. */
  const request = (op: { method: string; path: string }) => {
    const url = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      if (name === 'base_uuid' || name === 'dtable_uuid') return base.uuid;
      if (name === 'workspace_id') return String(base.workspaceId);
      if (name === 'base_name' || name === 'name') return encodeURIComponent(base.name);
      return 'x';
    });
    let authorization = `Token ${admin.token}`;
    if (url.startsWith('/api-gateway/')) authorization = `Bearer ${bt}`;
    else if (url.includes('app-access-token')) authorization = `Token ${apiToken}`;
    return { url, headers: { authorization } };
  };

  const refused = (res: { statusCode: number; body: string }) => res.statusCode === 400 && /cannot be stored/.test(res.body);

  it('refuses them in the query string of every operation', async () => {
    expect(operations.length).toBeGreaterThan(40);
    const wrong: string[] = [];
    for (const op of operations) {
      for (const bad of QUERY_BAD) {
        const { url, headers } = request(op);
        const res = await t.app.inject({ method: op.method as 'GET', url: `${url}${url.includes('?') ? '&' : '?'}x=${bad}`, headers });
        if (!refused(res)) wrong.push(`${op.method} ${op.path} ?x=${bad} → ${res.statusCode} ${res.body.slice(0, 120)}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('refuses them in the JSON body of every operation that takes one, in values and in keys', async () => {
    const wrong: string[] = [];
    for (const op of operations.filter((o) => o.method !== 'GET')) {
      for (const bad of BAD) {
        for (const body of [{ name: bad, table_name: bad, x: [bad] }, { [bad]: 1 }]) {
          const { url, headers } = request(op);
          const res = await t.app.inject({ method: op.method as 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
          if (!refused(res)) wrong.push(`${op.method} ${op.path} ${JSON.stringify(body)} → ${res.statusCode} ${res.body.slice(0, 120)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
