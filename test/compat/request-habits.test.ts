import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { listen, rawRequest } from '../helpers/raw-http.js';

/** What the Python client (requests) sends on every call, also GET and DELETE without a body. */
const PYTHON_HEADERS = { 'Content-Type': 'application/json', 'User-Agent': 'python-requests/2.31.0', Accept: '*/*', 'Accept-Encoding': 'gzip, deflate' };
/** What the PHP client (Guzzle) sends on a DELETE: the JSON type, and no Content-Length at all. */
const PHP_HEADERS = { 'Content-Type': 'application/json', 'User-Agent': 'GuzzleHttp/7', Accept: 'application/json' };

/** The ways an empty body arrives with a body content type. */
const EMPTY_BODIES: { name: string; headers: Record<string, string>; body?: string }[] = [
  { name: 'JSON type, Content-Length: 0 (python requests)', headers: { ...PYTHON_HEADERS, 'Content-Length': '0' } },
  { name: 'JSON type, no Content-Length (Guzzle)', headers: PHP_HEADERS },
  { name: 'JSON type, whitespace body', headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': '3' }, body: ' \n\t' },
  { name: 'form type, empty body', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '0' } },
  { name: 'form type, whitespace body', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': '2' }, body: '  ' },
];

describe.each(DIALECTS)('request habits of the official clients, over a listening server (%s)', (dialect) => {
  let t: TestApp;
  let server: string;
  let admin: TestUser;
  let base: TestBase;
  let baseTok: string;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    server = await listen(t);
    admin = await createUser(t, { admin: true });
    base = await createBase(t, admin);
    baseTok = await baseToken(t, admin, base);
  });
  afterAll(() => t.close());

  const auth = (path: string) => (path.startsWith('/api-gateway/') ? `Token ${baseTok}` : `Token ${admin.token}`);

  /** Every GET and DELETE route of the OpenAPI document, its parameters filled (names of a real base, ids that match nothing). */
  function routes(): { method: string; path: string }[] {
    const doc = t.app.swagger() as { paths: Record<string, Record<string, unknown>> };
    const fill: Record<string, string> = { base_uuid: base.uuid, workspace_id: String(base.workspaceId), base_name: encodeURIComponent(base.name), view_name: 'Nope' };
    const out: { method: string; path: string }[] = [];
    for (const [template, ops] of Object.entries(doc.paths)) {
      const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => fill[name] ?? '999999');
      for (const method of Object.keys(ops)) if (method === 'get' || method === 'delete') out.push({ method: method.toUpperCase(), path });
    }
    return out;
  }

  it('covers every GET and DELETE route of the API document', () => {
    const list = routes();
    expect(list.filter((r) => r.method === 'DELETE').length).toBeGreaterThanOrEqual(15);
    expect(list.filter((r) => r.method === 'GET').length).toBeGreaterThanOrEqual(25);
  });

  it.each(EMPTY_BODIES)('$name: every GET and DELETE route answers as if no body were sent', async ({ headers, body }) => {
    for (const { method, path } of routes()) {
      const withType = await rawRequest(server, method, path, { ...headers, Authorization: auth(path) }, body);
      const bare = await rawRequest(server, method, path, { Authorization: auth(path) });
      const where = `${method} ${path}: ${withType.body}`;
      expect(withType.status, where).toBeLessThan(500);
      expect(withType.body, where).not.toContain('Request body is');
      expect(withType.status, where).toBe(bare.status);
      if (bare.status >= 400) expect(withType.json(), where).toEqual(bare.json());
    }
  });

  it('Python-style DELETE of an API-Token and PHP-style DELETE of a webhook and an external link succeed', async () => {
    const created = await rawRequest(server, 'POST', basePath(base, 'api-tokens/'), { ...PYTHON_HEADERS, Authorization: `Token ${admin.token}` }, JSON.stringify({ app_name: 'habit-app', permission: 'rw' }));
    expect(created.status).toBe(201);
    const tokenDelete = await rawRequest(server, 'DELETE', basePath(base, 'api-tokens/habit-app/'), { ...PYTHON_HEADERS, 'Content-Length': '0', Authorization: `Token ${admin.token}` });
    expect(tokenDelete.status).toBe(200);
    expect(tokenDelete.json()).toEqual({ success: true });
    const tokens = await rawRequest(server, 'GET', basePath(base, 'api-tokens/'), { ...PYTHON_HEADERS, Authorization: `Token ${admin.token}` });
    expect(tokens.json<{ api_tokens: { app_name: string }[] }>().api_tokens.map((x) => x.app_name)).not.toContain('habit-app');

    const hook = await rawRequest(server, 'POST', basePath(base, 'webhooks/'), { ...PHP_HEADERS, Authorization: `Token ${admin.token}` }, JSON.stringify({ url: 'https://hooks.example.com/in' }));
    expect(hook.status).toBeLessThan(300);
    const hookId = hook.json<{ webhook: { id: number } }>().webhook.id;
    const hookDelete = await rawRequest(server, 'DELETE', basePath(base, `webhooks/${hookId}/`), { ...PHP_HEADERS, Authorization: `Token ${admin.token}` });
    expect(hookDelete.status).toBe(200);
    const hooks = await rawRequest(server, 'GET', basePath(base, 'webhooks/'), { ...PYTHON_HEADERS, Authorization: `Token ${admin.token}` });
    expect(hooks.json<{ webhook_list: { id: number }[] }>().webhook_list.map((w) => w.id)).not.toContain(hookId);

    const link = await rawRequest(server, 'POST', basePath(base, 'external-links/'), { ...PHP_HEADERS, Authorization: `Token ${admin.token}` }, '{}');
    expect(link.status).toBe(200);
    const linkToken = link.json<{ token: string }>().token;
    const linkDelete = await rawRequest(server, 'DELETE', basePath(base, `external-links/${linkToken}/`), { ...PHP_HEADERS, Authorization: `Token ${admin.token}` });
    expect(linkDelete.status).toBe(200);
  });

  it('a Python-style GET of rows and metadata with the JSON type answers data', async () => {
    const metadata = await rawRequest(server, 'GET', `/api-gateway/api/v2/dtables/${base.uuid}/metadata/`, { ...PYTHON_HEADERS, Authorization: `Token ${baseTok}` });
    expect(metadata.status).toBe(200);
    expect(metadata.json<{ metadata: { tables: unknown[] } }>().metadata.tables).toBeInstanceOf(Array);
  });

  it('a body that is really malformed JSON is still refused with a clear 400', async () => {
    const res = await rawRequest(server, 'DELETE', basePath(base, 'api-tokens/x/'), { 'Content-Type': 'application/json', 'Content-Length': '5', Authorization: `Token ${admin.token}` }, '{"a":');
    expect(res.status).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'Request body is not valid JSON.' });
  });
});
