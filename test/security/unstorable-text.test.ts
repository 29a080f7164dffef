import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

const NUL = 'a\u0000b';
const LONE_HIGH = 'a\ud800b';
const LONE_LOW = 'x\udc00';

/** The JSON text of `value` with lone surrogates kept as `\uXXXX` escapes (JSON.stringify keeps them so). */
const json = (value: unknown) => JSON.stringify(value);

describe.each(DIALECTS)('text no database can store (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let bt: string;
  let tableId: string;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    base = await createBase(t, owner, 'Text base');
    bt = await baseToken(t, owner, base);
    const meta = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/metadata/`, headers: { authorization: `Bearer ${bt}` } });
    tableId = meta.json().metadata.tables[0]._id;
  });
  afterAll(() => t.close());

  const expect400 = (res: { statusCode: number; json(): unknown }) => {
    expect(res.statusCode).toBe(400);
    // The SQL endpoint's error body is `{success: false, error_message}`, every other route's `{error_msg}`.
    const body = res.json() as { error_msg?: string; error_message?: string };
    expect(body.error_msg ?? body.error_message).toMatch(/cannot be stored/);
  };

  it.each([NUL, LONE_HIGH, LONE_LOW])('is refused in the login body before any password check (%j)', async (bad) => {
    expect400(await t.request({ method: 'POST', url: '/api2/auth-token/', headers: { 'content-type': 'application/json' }, payload: json({ username: bad, password: 'x' }) }));
    expect400(await t.request({ method: 'POST', url: '/api2/auth-token/', headers: { 'content-type': 'application/json' }, payload: json({ username: owner.email, password: bad }) }));
    // Form bodies too.
    expect400(await t.request({ method: 'POST', url: '/api2/auth-token/', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `username=a%00b&password=x` }));
  });

  it('is refused in path params and query strings of every family', async () => {
    const urls = [
      '/api/v2.1/external-link-tokens/ab%00cd/access-token/',
      '/api/v2.1/external-link-tokens/ab%ED%A0%80cd/access-token/',
      `/api/v2.1/workspace/${base.workspaceId}/dtable/a%00b/`,
      `/api/v2.1/workspace/${base.workspaceId}/dtable/${encodeURIComponent(base.name)}/access-token/?x=%00`,
      `/api-gateway/api/v2/dtables/${base.uuid}/rows/?table_name=a%00b`,
      `/api/v2.1/user/?q=%00`,
    ];
    for (const url of urls) {
      const res = await t.request({ method: 'GET', url, token: owner.token });
      // Either our guard's 400, or a 400 from URL decoding (an invalid UTF-8 sequence): never 5xx, never 2xx.
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toHaveProperty('error_msg');
    }
  });

  it('is refused in row, SQL, structure and webhook bodies, and nothing is written', async () => {
    const gw = `/api-gateway/api/v2/dtables/${base.uuid}`;
    const auth = { authorization: `Bearer ${bt}`, 'content-type': 'application/json' };
    for (const bad of [NUL, LONE_HIGH, LONE_LOW]) {
      expect400(await t.request({ method: 'POST', url: `${gw}/rows/`, headers: auth, payload: json({ table_id: tableId, rows: [{ Name: bad }] }) }));
      expect400(await t.request({ method: 'POST', url: `${gw}/rows/`, headers: auth, payload: json({ table_id: tableId, rows: [{ [bad]: 'key' }] }) }));
      expect400(await t.request({ method: 'POST', url: `${gw}/sql/`, headers: auth, payload: json({ sql: `select * from Table1 where Name = '${bad}'` }) }));
      expect400(await t.request({ method: 'POST', url: `${gw}/sql/`, headers: auth, payload: json({ sql: 'select * from Table1 where Name = ?', parameters: [bad] }) }));
      expect400(await t.request({ method: 'POST', url: `${gw}/tables/`, headers: auth, payload: json({ table_name: bad }) }));
      expect400(
        await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, headers: { 'content-type': 'application/json' }, payload: json({ url: `https://example.com/${bad}` }) }),
      );
      expect400(await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, headers: { 'content-type': 'application/json' }, payload: json({ password: `password${bad}` }) }));
    }
    const rows = await t.request({ method: 'GET', url: `${gw}/rows/?table_id=${tableId}`, headers: { authorization: `Bearer ${bt}` } });
    expect(rows.statusCode).toBe(200);
    expect(rows.json().rows).toEqual([]);
    const links = await t.request({ method: 'GET', url: basePath(base, 'external-links/'), token: owner.token });
    expect(links.json().links).toEqual([]);
  });

  it('still accepts well-formed text with paired surrogates and other control characters', async () => {
    const gw = `/api-gateway/api/v2/dtables/${base.uuid}`;
    const res = await t.request({
      method: 'POST',
      url: `${gw}/rows/`,
      headers: { authorization: `Bearer ${bt}`, 'content-type': 'application/json' },
      payload: json({ table_id: tableId, rows: [{ Name: 'emoji \ud83d\ude00 tab\t bell\u0007' }] }),
    });
    expect(res.statusCode).toBe(200);
  });
});
