import Fastify, { type FastifyInstance } from 'fastify';
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandlerPlugin } from '../../src/plugins/error-handler.js';
import { baseAuthPlugin } from '../../src/plugins/base-auth.js';
import { currentGateway } from '../../src/modules/access/index.js';
import { BaseTokenSigner } from '../../src/modules/tokens/index.js';
import {
  DIALECTS,
  basePath,
  baseToken,
  createBase,
  createTestApp,
  createUser,
  type TestApp,
  type TestBase,
  type TestUser,
} from '../helpers/index.js';

const THREE_DAYS_MS = 3 * 86_400_000;
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe.each(DIALECTS)('Base-Token enforcement on /api-gateway/ (%s)', (dialect) => {
  let t: TestApp;
  /** A second Fastify instance with the real verifier and test-only read and write routes. */
  let probe: FastifyInstance;
  let owner: TestUser;
  let reader: TestUser;
  let base: TestBase;
  let other: TestBase;

  const probePath = (b: Pick<TestBase, 'uuid'>, suffix = 'probe/') => `/api-gateway/api/v2/dtables/${b.uuid}/${suffix}`;
  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, authorization?: string) =>
    probe.inject({ method, url, headers: authorization === undefined ? {} : { authorization } });
  const expectDenied = (res: { statusCode: number; json(): unknown }, message = 'Permission denied.') => {
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error_msg: message });
  };
  const apiBaseToken = async (permission: 'r' | 'rw', appName: string, on = base) => {
    const created = await t.request({ method: 'POST', url: basePath(on, 'api-tokens/'), token: owner.token, payload: { app_name: appName, permission } });
    expect(created.statusCode).toBe(201);
    const res = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${created.json().api_token}` } });
    return res.json<{ access_token: string }>().access_token;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    reader = await createUser(t);
    base = await createBase(t, owner);
    other = await createBase(t, owner);
    await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: reader.email, permission: 'r' } });

    probe = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
    await probe.register(errorHandlerPlugin);
    await probe.register(baseAuthPlugin, { verifier: t.container.baseTokens });
    const echo = async (request: Parameters<typeof currentGateway>[0]) => {
      const { claims, base: b } = currentGateway(request);
      return { base_id: b.id, permission: claims.permission };
    };
    probe.get('/api-gateway/api/v2/dtables/:base_uuid/probe/', { config: { baseAuth: 'read' } }, echo);
    probe.post('/api-gateway/api/v2/dtables/:base_uuid/probe/', { config: { baseAuth: 'write' } }, echo);
    // A route under the prefix that forgot config.baseAuth: must fail closed (treated as a write).
    probe.delete('/api-gateway/api/v2/dtables/:base_uuid/forgotten/', async () => ({ reached: true }));
    await probe.ready();
  });
  afterAll(async () => {
    await probe?.close();
    await t?.close();
  });

  it('lets a valid token through, with Token or Bearer, dashed or 32-hex uuid', async () => {
    const token = await baseToken(t, owner, base);
    for (const url of [probePath(base), probePath({ uuid: base.uuid.replace(/-/g, '') }), probePath({ uuid: base.uuid.toUpperCase() })]) {
      for (const scheme of ['Token', 'Bearer', 'bearer']) {
        const res = await call('GET', url, `${scheme} ${token}`);
        expect(res.statusCode, `${scheme} ${url}`).toBe(200);
        expect(res.json()).toEqual({ base_id: base.id, permission: 'rw' });
      }
    }
    expect((await call('POST', probePath(base), `Token ${token}`)).statusCode).toBe(200);
  });

  it('serves the real GET /api-gateway/api/v2/dtables/{uuid}/ and refuses it without a token', async () => {
    const token = await baseToken(t, reader, base);
    const ok = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/`, headers: { authorization: `Bearer ${token}` } });
    expect(ok.statusCode).toBe(200);
    expectDenied(await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/` }));
    expectDenied(await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${other.uuid}/`, headers: { authorization: `Bearer ${token}` } }));
    const ping = await t.request({ method: 'GET', url: '/api-gateway/api/v2/ping/' });
    expect(ping.statusCode).toBe(200);
  });

  it('refuses missing and malformed Authorization headers', async () => {
    const token = await baseToken(t, owner, base);
    for (const header of [undefined, '', 'Token', `Basic ${token}`, `Token ${token} x`, token]) {
      expectDenied(await call('GET', probePath(base), header));
    }
  });

  it('refuses forged and tampered tokens', async () => {
    const token = await baseToken(t, reader, base);
    const [header, , signature] = token.split('.') as [string, string, string];
    const escalated = b64({ ...decodeJwt(token), permission: 'rw' });
    for (const forged of [
      'not-a-jwt',
      'a.b.c',
      `${header}.${escalated}.${signature}`, // payload changed, signature kept
      `${header}.${escalated}`,
      // The signature's first character changed (its last ones may carry only padding bits).
      `${token.slice(0, token.lastIndexOf('.') + 1)}${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`,
    ]) {
      expectDenied(await call('POST', probePath(base), `Token ${forged}`));
      expectDenied(await call('GET', probePath(base), `Token ${forged}`));
    }
  });

  it('refuses a token re-signed with alg none', async () => {
    const claims = decodeJwt(await baseToken(t, owner, base));
    for (const alg of ['none', 'None', 'NONE']) {
      const unsigned = `${b64({ alg, typ: 'JWT' })}.${b64(claims)}.`;
      expectDenied(await call('GET', probePath(base), `Token ${unsigned}`));
    }
  });

  it('refuses a token signed with a wrong key or another algorithm', async () => {
    const grant = { baseUuid: base.uuid, permission: 'rw' as const, username: owner.virtualId, ownerId: owner.virtualId, appName: null, source: 'account' as const, sourceId: owner.id, version: 0 };
    const wrongKey = await new BaseTokenSigner('another-secret-key-another-secret-key-0000', t.clock).sign(grant);
    expectDenied(await call('GET', probePath(base), `Token ${wrongKey.token}`));
    // The right key material under HS512, and under the bare SECRET_KEY (not the derived Base-Token key).
    const claims = decodeJwt(await baseToken(t, owner, base));
    const hs512 = await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).sign(new TextEncoder().encode(`base-token:${t.config.secretKey}`));
    expectDenied(await call('GET', probePath(base), `Token ${hs512}`));
    const bareKey = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(t.config.secretKey));
    expectDenied(await call('GET', probePath(base), `Token ${bareKey}`));
    // Sanity: the same claims under the real key pass, so the refusals above are about the key.
    const real = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(`base-token:${t.config.secretKey}`));
    expect((await call('GET', probePath(base), `Token ${real}`)).statusCode).toBe(200);
  });

  it('refuses a validly signed token without our claims', async () => {
    const key = new TextEncoder().encode(`base-token:${t.config.secretKey}`);
    const now = Math.floor(t.clock.now() / 1000);
    for (const payload of [
      { dtable_uuid: base.uuid, permission: 'rw' }, // no src/sid/ver, as the original's tokens
      { dtable_uuid: base.uuid, permission: 'admin', src: 'account', sid: owner.id, ver: 0 },
      { dtable_uuid: base.uuid, permission: 'rw', src: 'magic', sid: owner.id, ver: 0 },
    ]) {
      const token = await new SignJWT(payload).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(now + 60).sign(key);
      expectDenied(await call('GET', probePath(base), `Token ${token}`));
    }
  });

  it('answers Token expired. after three days, exactly', async () => {
    const token = await baseToken(t, owner, base);
    expect((await call('GET', probePath(base), `Token ${token}`)).statusCode).toBe(200); // cached as verified
    t.clock.advance(THREE_DAYS_MS - 1000);
    expect((await call('GET', probePath(base), `Token ${token}`)).statusCode).toBe(200);
    t.clock.advance(1000);
    expectDenied(await call('GET', probePath(base), `Token ${token}`), 'Token expired.');
    expectDenied(await call('POST', probePath(base), `Bearer ${token}`), 'Token expired.');
    const fresh = await baseToken(t, owner, base);
    expect((await call('GET', probePath(base), `Token ${fresh}`)).statusCode).toBe(200);
  });

  it('refuses a token for another base, and a malformed base uuid', async () => {
    const token = await baseToken(t, owner, other);
    expectDenied(await call('GET', probePath(base), `Token ${token}`));
    expectDenied(await call('GET', probePath({ uuid: 'not-a-uuid' }), `Token ${token}`));
    expect((await call('GET', probePath(other), `Token ${token}`)).statusCode).toBe(200);
  });

  it('refuses read-only tokens on writes, from every source', async () => {
    const fromAccount = await baseToken(t, reader, base);
    const fromApiToken = await apiBaseToken('r', 'read-only app');
    const link = await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload: {} });
    const fromLink = (await t.request({ method: 'GET', url: `/api/v2.1/external-link-tokens/${link.json().token}/access-token/` })).json().access_token;
    for (const token of [fromAccount, fromApiToken, fromLink]) {
      expect((await call('GET', probePath(base), `Token ${token}`)).statusCode).toBe(200);
      expectDenied(await call('POST', probePath(base), `Token ${token}`), "You don't have permission to perform this operation on this base.");
      expectDenied(await call('DELETE', probePath(base, 'forgotten/'), `Token ${token}`), "You don't have permission to perform this operation on this base.");
    }
    const rw = await apiBaseToken('rw', 'writer app');
    expect((await call('POST', probePath(base), `Token ${rw}`)).statusCode).toBe(200);
    expect((await call('DELETE', probePath(base, 'forgotten/'), `Token ${rw}`)).json()).toEqual({ reached: true });
    expectDenied(await call('DELETE', probePath(base, 'forgotten/')));
  });

  it('answers 404 for a token whose base was deleted', async () => {
    const doomed = await createBase(t, owner);
    const token = await baseToken(t, owner, doomed);
    expect((await call('GET', probePath(doomed), `Token ${token}`)).statusCode).toBe(200); // base now cached
    const del = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${doomed.workspaceId}/dtable/`, token: owner.token, payload: { name: doomed.name } });
    expect(del.statusCode).toBe(200);
    const res = await call('GET', probePath(doomed), `Token ${token}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error_msg: 'dtable not found.' });
  });
});
