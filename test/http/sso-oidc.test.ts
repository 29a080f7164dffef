import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, TEST_PUBLIC_URL, createTestApp, createUser, type TestApp } from '../helpers/index.js';
import { startTestIdp, type TestIdp } from '../helpers/oidc-idp.js';
import { loadConfig } from '../../src/config/index.js';

const CALLBACK = '/api/v2.1/sso/oidc/callback/';
const REDIRECT_URI = `${TEST_PUBLIC_URL}${CALLBACK}`;

describe.each(DIALECTS)('OpenID Connect sign-in against a real provider (%s)', (dialect) => {
  let idp: TestIdp;
  let t: TestApp;
  const users = () => t.container.db.selectFrom('users').select(['email', 'is_staff', 'name']).orderBy('id').execute();

  /** Starts a sign-in at our server and plays the browser at the provider: the callback URL it returns to. */
  async function toCallback(): Promise<URL> {
    const start = await t.request({ method: 'GET', url: '/api/v2.1/sso/oidc/login/' });
    expect(start.statusCode, start.body).toBe(302);
    const location = String(start.headers.location);
    expect(location.startsWith(`${idp.issuer}/auth?`)).toBe(true);
    const params = new URL(location).searchParams;
    expect(params.get('code_challenge_method')).toBe('S256');
    expect(params.get('state')).toMatch(/.{20,}/);
    expect(params.get('nonce')).toMatch(/.{20,}/);
    const back = await idp.authorize(location);
    expect(back.origin + back.pathname).toBe(REDIRECT_URI);
    return back;
  }
  const finish = (back: URL) => t.request({ method: 'GET', url: `${CALLBACK}${back.search}`, headers: { accept: 'application/json' } });

  beforeAll(async () => {
    idp = await startTestIdp(REDIRECT_URI);
    t = await createTestApp(dialect, {
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_REDIRECT_URI: REDIRECT_URI,
      OIDC_ALLOW_HTTP: 'true',
      OIDC_ALLOWED_DOMAINS: 'example.com',
      OIDC_ADMIN_CLAIM: 'groups=admins',
    });
  });
  afterAll(async () => {
    await t.close();
    await idp.close();
  });

  it('tells the console to show the button', async () => {
    expect((await t.request({ method: 'GET', url: '/api/v2.1/sso/oidc/' })).json()).toEqual({ enabled: true, login_url: '/api/v2.1/sso/oidc/login/' });
  });

  it('creates a user by e-mail on first sign-in, and signs the same user in again', async () => {
    idp.signInAs({ sub: 'u-olga', email: 'olga@example.com', email_verified: true, name: 'Olga' });
    const res = await finish(await toCallback());
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const { token, email, created } = res.json<{ token: string; email: string; created: boolean }>();
    expect({ email, created }).toEqual({ email: 'olga@example.com', created: true });
    const me = await t.request({ method: 'GET', url: '/api/v2.1/user/', token });
    expect(me.json()).toMatchObject({ contact_email: 'olga@example.com', name: 'Olga', is_staff: false });
    const again = await finish(await toCallback());
    expect(again.json()).toMatchObject({ token, created: false });
    await t.container.audit.seal();
    const audit = await t.container.db.selectFrom('audit_log').selectAll().where('action', '=', 'login.success').where('target', '=', 'oidc').execute();
    expect(audit.map((row) => row.actor)).toEqual(['olga@example.com', 'olga@example.com']);
    expect(JSON.stringify(audit)).not.toContain(token);
  });

  it('matches an existing user by e-mail, and sets the admin flag from the claim', async () => {
    const existing = await createUser(t, { email: 'pete@example.com' });
    idp.signInAs({ sub: 'u-pete', email: 'Pete@Example.com', email_verified: true, groups: ['staff', 'admins'] });
    const res = await finish(await toCallback());
    expect(res.json()).toMatchObject({ token: existing.token, created: false });
    expect((await users()).find((u) => u.email === 'pete@example.com')?.is_staff).toBe(1);
    // Without the group, the flag goes again.
    idp.signInAs({ sub: 'u-pete', email: 'pete@example.com', email_verified: true, groups: ['staff'] });
    await finish(await toCallback());
    expect((await users()).find((u) => u.email === 'pete@example.com')?.is_staff).toBe(0);
  });

  it('refuses other domains, unverified and missing e-mails with 403, creating no one', async () => {
    const before = await users();
    for (const account of [
      { sub: 'u-x', email: 'x@other.org', email_verified: true },
      { sub: 'u-y', email: 'y@example.com', email_verified: false },
      { sub: 'u-z' },
    ]) {
      idp.signInAs(account);
      const res = await finish(await toCallback());
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json()).toHaveProperty('error_msg');
    }
    expect(await users()).toEqual(before);
  });

  it('a replayed callback, an unknown or expired state, a changed code or nonce are 400 and sign no one in', async () => {
    idp.signInAs({ sub: 'u-quinn', email: 'quinn@example.com', email_verified: true });
    const before = await users();
    // Unknown and missing state.
    const back = await toCallback();
    const forged = new URL(back);
    forged.searchParams.set('state', 'not-a-state-we-sent');
    expect((await finish(forged)).statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: CALLBACK })).json()).toEqual({ error_msg: 'state missing.' });
    // A changed code: the provider refuses the exchange; the state is used up.
    const changed = new URL(back);
    changed.searchParams.set('code', 'x'.repeat(43));
    const refused = await finish(changed);
    expect(refused.statusCode).toBe(400);
    expect((await finish(back)).statusCode).toBe(400);
    // Expired: a sign-in started more than 10 minutes ago.
    const late = await toCallback();
    t.clock.advance(11 * 60_000);
    expect((await finish(late)).json()).toEqual({ error_msg: 'state invalid or expired: start the sign-in again.' });
    // A nonce that does not match the ID token's.
    const tampered = await toCallback();
    await t.container.db.updateTable('oidc_logins').set({ nonce: 'another-nonce-value-0123456789' }).execute();
    expect((await finish(tampered)).statusCode).toBe(400);
    expect(await users()).toEqual(before);
    // A replay of a good callback.
    const good = await toCallback();
    expect((await finish(good)).statusCode).toBe(200);
    expect((await finish(good)).statusCode).toBe(400);
  });

  it('without JSON in Accept, the callback hands the token to the console in the URL fragment', async () => {
    idp.signInAs({ sub: 'u-olga', email: 'olga@example.com', email_verified: true });
    const back = await toCallback();
    const res = await t.request({ method: 'GET', url: `${CALLBACK}${back.search}` });
    expect(res.statusCode).toBe(302);
    expect(String(res.headers.location)).toMatch(/^\/#sso=[0-9a-f]{40}$/);
  });
});

describe.each(DIALECTS)('OpenID Connect not configured (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('hides the button and answers 404', async () => {
    expect((await t.request({ method: 'GET', url: '/api/v2.1/sso/oidc/' })).json()).toEqual({ enabled: false, login_url: null });
    expect((await t.request({ method: 'GET', url: '/api/v2.1/sso/oidc/login/' })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: `${CALLBACK}?state=a&code=b` })).statusCode).toBe(404);
  });

  it('a half or wrong OIDC configuration stops the start, naming the variable', () => {
    const env = { SECRET_KEY: 'x'.repeat(40), DATA_DIR: '/tmp/basegate-oidc-config' };
    const full = { OIDC_ISSUER: 'https://idp.example.com', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 's', OIDC_REDIRECT_URI: 'https://bg.example.com/api/v2.1/sso/oidc/callback/' };
    const load = (extra: Record<string, string>) => () => loadConfig({ ...env, ...extra }, { persistSecret: false });
    expect(load({ ...full, OIDC_CLIENT_SECRET: '' })).toThrow(/OIDC_CLIENT_SECRET/);
    expect(load({ ...full, OIDC_ISSUER: 'http://idp.example.com' })).toThrow(/OIDC_ISSUER/);
    expect(load({ ...full, OIDC_REDIRECT_URI: 'not a url' })).toThrow(/OIDC_REDIRECT_URI/);
    expect(load({ ...full, OIDC_ALLOWED_DOMAINS: 'ex ample.com' })).toThrow(/OIDC_ALLOWED_DOMAINS/);
    expect(load(full)().oidc).toMatchObject({ issuer: 'https://idp.example.com', createUsers: true, adminClaim: null });
  });
});
