import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { listen, rawRequest } from '../helpers/raw-http.js';

/** RFC 3339 with an explicit offset, as the original renders `format: date-time` fields. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** Fields the original's OpenAPI documents type `format: date-time` in the account API. */
const DATE_TIME_KEYS = new Set(['generated_at', 'last_access', 'created_at', 'updated_at', 'create_time']);

/** Every (path, value) of a date-time key anywhere in a JSON document. */
function dateTimeFields(value: unknown, path = ''): [string, unknown][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => dateTimeFields(v, `${path}[${i}]`));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(DATE_TIME_KEYS.has(k) ? ([[`${path}.${k}`, v]] as [string, unknown][]) : []),
    ...dateTimeFields(v, `${path}.${k}`),
  ]);
}

describe.each(DIALECTS)('date-time fields of the account API (%s)', (dialect) => {
  let t: TestApp;
  let server: string;
  let owner: TestUser;
  let base: TestBase;
  const get = (path: string) => rawRequest(server, 'GET', path, { 'Content-Type': 'application/json', Authorization: `Token ${owner.token}` });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    server = await listen(t);
    owner = await createUser(t);
    base = await createBase(t, owner);
  });
  afterAll(() => t.close());

  it('a new API-Token has last_access = generated_at, both RFC 3339, until it is first used', async () => {
    const created = await rawRequest(server, 'POST', basePath(base, 'api-tokens/'), { 'Content-Type': 'application/json', Authorization: `Token ${owner.token}` }, JSON.stringify({ app_name: 'typed', permission: 'r' }));
    expect(created.status).toBe(201);
    const record = created.json<{ api_token: string; generated_at: string; last_access: string }>();
    expect(record.last_access).toMatch(RFC3339);
    expect(record.last_access).toBe(record.generated_at);

    t.clock.advance(90_000);
    const used = await rawRequest(server, 'GET', '/api/v2.1/dtable/app-access-token/', { Authorization: `Token ${record.api_token}` });
    expect(used.status).toBe(200);
    const listed = (await get(basePath(base, 'api-tokens/'))).json<{ api_tokens: { app_name: string; last_access: string; generated_at: string }[] }>();
    const after = listed.api_tokens.find((x) => x.app_name === 'typed')!;
    expect(after.last_access).toMatch(RFC3339);
    expect(Date.parse(after.last_access) - Date.parse(after.generated_at)).toBe(90_000);
  });

  it('every date-time field of the account API is RFC 3339, never ""', async () => {
    await rawRequest(server, 'POST', basePath(base, 'external-links/'), { 'Content-Type': 'application/json', Authorization: `Token ${owner.token}` }, '{}');
    await rawRequest(server, 'POST', basePath(base, 'api-tokens/'), { 'Content-Type': 'application/json', Authorization: `Token ${owner.token}` }, JSON.stringify({ app_name: 'unused', permission: 'rw' }));
    const docs = await Promise.all(
      ['/api/v2.1/user/', '/api/v2.1/workspaces/', basePath(base, 'api-tokens/'), basePath(base, 'external-links/'), basePath(base, 'notification-rules/')].map(get),
    );
    const fields = docs.flatMap((d) => dateTimeFields(d.json()));
    expect(fields.map(([p]) => p)).toEqual(expect.arrayContaining(['.create_time', '.api_tokens[0].last_access', '.api_tokens[0].generated_at']));
    expect(fields.length).toBeGreaterThanOrEqual(7);
    for (const [path, value] of fields) expect(value, path).toMatch(RFC3339);
  });
});
