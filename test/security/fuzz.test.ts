import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/shared/seeded-random.js';
import { DIALECTS, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

const SEED = 17_2026;
const REQUESTS_PER_DIALECT = 3000;

const PARAM_VALUES = [
  '', '0', '-1', '1e309', '99999999999999999999', 'abc', '%00', '%ZZ', '%C0%AF', '..', '%2e%2e%2f', 'a%00b', '%ED%A0%80',
  'x'.repeat(300), '😀', "' OR 1=1 --", '<script>', '00000000-0000-0000-0000-000000000000', 'null', 'true', '%25', '%20',
];
const SCALARS: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, '', 'x', 'a\u0000b', '\ud800', '\udc00x', ' ', 'x'.repeat(5000), '2024-02-30', '%', '{}'];

describe.each(DIALECTS)('fuzz over the OpenAPI routes (%s)', (dialect) => {
  let t: TestApp;
  let user: TestUser;
  let base: TestBase;
  let bt: string;
  let operations: Array<{ method: string; path: string }>;

  beforeAll(async () => {
    t = await createTestApp(dialect, { RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0' });
    user = await createUser(t);
    base = await createBase(t, user);
    bt = await baseToken(t, user, base);
    const doc = (await t.request({ method: 'GET', url: '/api/docs/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    // The change feed's Server-Sent Events form streams until the client leaves, which an injected request
    // never does; its input checks are tested in test/http/change-feed.test.ts.
    operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).filter((m) => ['get', 'post', 'put', 'delete', 'patch'].includes(m)).map((method) => ({ method: method.toUpperCase(), path })),
    ).filter((op) => !op.path.endsWith('/changes/stream/'));
  });
  afterAll(() => t.close());

  it(`answers ${REQUESTS_PER_DIALECT} malformed requests without a 5xx`, async () => {
    expect(operations.length).toBeGreaterThan(40);
    const random = seededRandom(SEED);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const value = (depth = 0): unknown => {
      const r = random();
      if (depth > 3 || r < 0.5) return pick(SCALARS);
      if (r < 0.75) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 5) }, () => [pick(['table_name', 'rows', 'sql', 'name', 'url', 'row_id', 'email', 'password', 'x', '']), value(depth + 1)]));
    };
    const failures: string[] = [];
    for (let i = 0; i < REQUESTS_PER_DIALECT; i++) {
      const op = pick(operations);
      const realParams = random() < 0.5;
      const url = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
        if (realParams && name === 'base_uuid') return base.uuid;
        if (realParams && name === 'workspace_id') return String(base.workspaceId);
        if (realParams && name === 'base_name') return encodeURIComponent(base.name);
        return pick(PARAM_VALUES);
      });
      const query = random() < 0.4 ? `?${pick(['table_name', 'view_name', 'start', 'limit', 'page', 'per_page', 'password', 'q'])}=${pick(PARAM_VALUES)}` : '';
      const auth = pick<Record<string, string>>([{}, { authorization: `Token ${user.token}` }, { authorization: `Bearer ${bt}` }, { authorization: `Bearer ${pick(PARAM_VALUES)}` }]);
      const kind = random();
      let headers: Record<string, string> = { ...auth };
      let payload: string | undefined;
      if (op.method !== 'GET' && kind < 0.5) {
        headers = { ...headers, 'content-type': 'application/json' };
        payload = JSON.stringify(value());
      } else if (op.method !== 'GET' && kind < 0.65) {
        headers = { ...headers, 'content-type': 'application/json' };
        payload = pick(['{', '{"a":', '[1,2', '"\\u0000"', '{"sql": "\\ud800"}', '\u0000', '{"__proto__": {"x": 1}}', '[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]']);
      } else if (op.method !== 'GET' && kind < 0.8) {
        headers = { ...headers, 'content-type': 'application/x-www-form-urlencoded' };
        payload = `${pick(['name', 'table_name', 'sql', 'email'])}=${pick(PARAM_VALUES)}&x=${pick(PARAM_VALUES)}`;
      } else if (op.method !== 'GET' && kind < 0.9) {
        headers = { ...headers, 'content-type': pick(['multipart/form-data; boundary=zz', 'text/plain', 'application/xml', 'application/json; charset=latin1']) };
        payload = `--zz\r\nContent-Disposition: form-data; name="name"\r\n\r\n${pick(PARAM_VALUES)}\r\n--zz--`;
      }
      const res = await t.app.inject({ method: op.method as 'GET', url: url + query, headers, ...(payload === undefined ? {} : { payload }) });
      if (res.statusCode >= 500) failures.push(`${op.method} ${url}${query} [${headers['content-type'] ?? ''}] ${payload?.slice(0, 200) ?? ''} → ${res.statusCode} ${res.body.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
