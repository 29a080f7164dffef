import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/modules/accounts/index.js';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

const STEP = 30_000;

describe.each(DIALECTS)('two-factor sign-in and devices (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;
  let address = 0;
  /** Each test its own client address: wrong codes count against the address too (the back-off). */
  const nextIp = () => `10.9.0.${++address}`;
  const signIn = (user: TestUser, otp?: string, extra: Record<string, string> = {}, remoteAddress = nextIp()) =>
    t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: user.email, password: user.password, ...extra }, headers: otp === undefined ? {} : { 'x-seafile-otp': otp }, remoteAddress });
  const status = async (user: TestUser) => (await t.request({ method: 'GET', url: '/api/v2.1/user/two-factor-auth/', token: user.token })).json();
  const auditRows = async () => {
    await t.container.audit.seal();
    return t.container.db.selectFrom('audit_log').selectAll().orderBy('seq').execute();
  };

  /** Enrols `user` and returns the secret and recovery codes; the clock moves on a step so the next code is new. */
  async function enrol(user: TestUser): Promise<{ secret: string; recovery: string[] }> {
    const begun = await t.request({ method: 'POST', url: '/api/v2.1/user/two-factor-auth/', token: user.token });
    expect(begun.statusCode, begun.body).toBe(200);
    const { secret } = begun.json<{ secret: string }>();
    const confirmed = await t.request({ method: 'PUT', url: '/api/v2.1/user/two-factor-auth/', token: user.token, payload: { code: totpCode(secret, t.clock.now()) } });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    t.clock.advance(STEP);
    return { secret, recovery: confirmed.json<{ recovery_codes: string[] }>().recovery_codes };
  }

  beforeAll(async () => {
    t = await createTestApp(dialect);
    admin = await createUser(t, { email: 'admin@example.com', admin: true });
  });
  afterAll(() => t.close());

  it('enrols with a secret and an otpauth:// URI, confirmed by a code; a wrong code changes nothing', async () => {
    const alice = await createUser(t, { email: 'alice@example.com' });
    expect(await status(alice)).toEqual({ enabled: false, pending: false, force_2fa: false, recovery_codes_left: 0 });
    const begun = await t.request({ method: 'POST', url: '/api/v2.1/user/two-factor-auth/', token: alice.token });
    expect(begun.headers['cache-control']).toBe('no-store');
    const { secret, otpauth_uri } = begun.json<{ secret: string; otpauth_uri: string }>();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauth_uri).toBe(`otpauth://totp/basegate:alice%40example.com?issuer=basegate&secret=${secret}&algorithm=SHA1&digits=6&period=30`);
    expect(await status(alice)).toMatchObject({ enabled: false, pending: true });
    // The secret is not stored in clear.
    const stored = await t.container.db.selectFrom('user_two_factor').selectAll().where('user_id', '=', alice.id).executeTakeFirstOrThrow();
    expect(stored.secret_enc).not.toContain(secret);

    const wrong = await t.request({ method: 'PUT', url: '/api/v2.1/user/two-factor-auth/', token: alice.token, payload: { code: '000000' === totpCode(secret, t.clock.now()) ? '111111' : '000000' }, remoteAddress: nextIp() });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toEqual({ error_msg: 'Two factor auth token is invalid.' });
    for (const code of [undefined, '', 'abc', '1234567']) {
      const bad = await t.request({ method: 'PUT', url: '/api/v2.1/user/two-factor-auth/', token: alice.token, payload: code === undefined ? {} : { code }, remoteAddress: nextIp() });
      expect(bad.statusCode).toBe(400);
    }
    expect(await status(alice)).toMatchObject({ enabled: false, pending: true });
    // Without the code, sign-in still works with the password alone.
    expect((await signIn(alice)).statusCode).toBe(200);

    const ok = await t.request({ method: 'PUT', url: '/api/v2.1/user/two-factor-auth/', token: alice.token, payload: { code: totpCode(secret, t.clock.now()) } });
    expect(ok.statusCode).toBe(200);
    const codes = ok.json<{ recovery_codes: string[] }>().recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    expect(await status(alice)).toEqual({ enabled: true, pending: false, force_2fa: false, recovery_codes_left: 10 });
    // A second enrolment is refused while enabled.
    expect((await t.request({ method: 'POST', url: '/api/v2.1/user/two-factor-auth/', token: alice.token })).statusCode).toBe(400);
    // Recovery codes are stored hashed.
    const hashes = await t.container.db.selectFrom('two_factor_recovery_codes').select('code_hash').where('user_id', '=', alice.id).execute();
    expect(hashes.map((h) => h.code_hash)).not.toContain(codes[0]);
  });

  it('sign-in then requires the code: missing, wrong, replayed and expired codes are 400 with X-Seafile-OTP: required', async () => {
    const bob = await createUser(t, { email: 'bob@example.com' });
    const { secret } = await enrol(bob);
    const missing = await signIn(bob);
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ non_field_errors: ['Two factor auth token is missing.'] });
    expect(missing.headers['x-seafile-otp']).toBe('required');
    // A wrong password does not reveal that 2FA is on.
    const wrongPassword = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: bob.email, password: 'not-the-password' }, headers: { 'x-seafile-otp': '123456' }, remoteAddress: nextIp() });
    expect(wrongPassword.json()).toEqual({ non_field_errors: ['Unable to login with provided credentials.'] });
    expect(wrongPassword.headers['x-seafile-otp']).toBeUndefined();

    const code = totpCode(secret, t.clock.now());
    const good = await signIn(bob, code);
    expect(good.statusCode, good.body).toBe(200);
    expect(good.json().token).toBe(bob.token);
    // The same code again (a replay) is refused, also within its 30 s.
    const replay = await signIn(bob, code);
    expect(replay.statusCode).toBe(400);
    expect(replay.json()).toEqual({ non_field_errors: ['Two factor auth token is invalid.'] });
    expect(replay.headers['x-seafile-otp']).toBe('required');
    // A code of three steps ago has expired (one step of drift is allowed).
    t.clock.advance(STEP);
    expect((await signIn(bob, totpCode(secret, t.clock.now() - 3 * STEP))).statusCode).toBe(400);
    expect((await signIn(bob, 'x'.repeat(300))).statusCode).toBe(400);
    // The current code works.
    expect((await signIn(bob, totpCode(secret, t.clock.now()))).statusCode).toBe(200);
  });

  it('a recovery code signs in once', async () => {
    const carol = await createUser(t, { email: 'carol@example.com' });
    const { recovery } = await enrol(carol);
    expect((await signIn(carol, recovery[0]!)).statusCode).toBe(200);
    expect((await signIn(carol, recovery[0]!)).statusCode).toBe(400);
    expect((await status(carol)).recovery_codes_left).toBe(9);
    expect((await signIn(carol, recovery[1]!.toUpperCase())).statusCode).toBe(200);
  });

  it('throttles code guessing like passwords: after 5 wrong codes, 429 with Retry-After, even with the right code', async () => {
    const dave = await createUser(t, { email: 'dave@example.com' });
    const { secret } = await enrol(dave);
    const right = totpCode(secret, t.clock.now());
    const wrong = right === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i += 1) expect((await signIn(dave, wrong)).statusCode).toBe(400);
    const blocked = await signIn(dave, right);
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // The confirm/disable routes count too (keyed by the account, whatever the address).
    const eve = await createUser(t, { email: 'eve@example.com' });
    const eveSecret = await enrol(eve);
    for (let i = 0; i < 5; i += 1) {
      const res = await t.request({ method: 'DELETE', url: '/api/v2.1/user/two-factor-auth/', token: eve.token, payload: { code: wrong }, remoteAddress: nextIp() });
      expect(res.statusCode).toBe(400);
    }
    const stopped = await t.request({ method: 'DELETE', url: '/api/v2.1/user/two-factor-auth/', token: eve.token, payload: { code: totpCode(eveSecret.secret, t.clock.now()) }, remoteAddress: nextIp() });
    expect(stopped.statusCode).toBe(429);
    expect((await status(eve)).enabled).toBe(true);
  });

  it('turning it off needs a code; new recovery codes replace the old', async () => {
    const fay = await createUser(t, { email: 'fay@example.com' });
    const { secret, recovery } = await enrol(fay);
    const renewed = await t.request({ method: 'POST', url: '/api/v2.1/user/two-factor-auth/recovery-codes/', token: fay.token, payload: { code: totpCode(secret, t.clock.now()) } });
    expect(renewed.statusCode).toBe(200);
    t.clock.advance(STEP);
    expect((await signIn(fay, recovery[0]!)).statusCode).toBe(400);
    expect((await t.request({ method: 'DELETE', url: '/api/v2.1/user/two-factor-auth/', token: fay.token, payload: {}, remoteAddress: nextIp() })).statusCode).toBe(400);
    expect((await status(fay)).enabled).toBe(true);
    const off = await t.request({ method: 'DELETE', url: '/api/v2.1/user/two-factor-auth/', token: fay.token, payload: { code: renewed.json<{ recovery_codes: string[] }>().recovery_codes[0] } });
    expect(off.statusCode).toBe(200);
    expect(await status(fay)).toMatchObject({ enabled: false, pending: false, recovery_codes_left: 0 });
    expect((await signIn(fay)).statusCode).toBe(200);
  });

  it("the original's admin operations: force 2FA, and turn a user's 2FA off", async () => {
    const gus = await createUser(t, { email: 'gus@example.com' });
    const { secret, recovery } = await enrol(gus);
    const forced = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${encodeURIComponent(gus.virtualId)}/two-factor-auth/`, token: admin.token, payload: { force_2fa: 1 } });
    expect(forced.json()).toEqual({ success: true });
    expect((await status(gus)).force_2fa).toBe(true);
    expect((await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${gus.email}/two-factor-auth/`, token: admin.token, payload: { force_2fa: 7 } })).statusCode).toBe(400);
    expect((await t.request({ method: 'DELETE', url: `/api2/two-factor-auth/${gus.email}/`, token: gus.token })).statusCode).toBe(403);
    expect((await status(gus)).enabled).toBe(true);
    expect((await t.request({ method: 'DELETE', url: '/api2/two-factor-auth/nobody@example.com/', token: admin.token })).statusCode).toBe(404);
    const off = await t.request({ method: 'DELETE', url: `/api2/two-factor-auth/${gus.email}/`, token: admin.token });
    expect(off.json()).toEqual({ success: true });
    expect(await status(gus)).toMatchObject({ enabled: false, force_2fa: true });
    expect((await signIn(gus)).statusCode).toBe(200);
    const actions = (await auditRows()).map((row) => row.action);
    expect(actions).toEqual(expect.arrayContaining(['two_factor.enable', 'two_factor.disable', 'admin.two_factor_force', 'admin.two_factor_disable', 'login.two_factor_required']));
    // No code, secret or recovery code enters the audit log.
    const stored = JSON.stringify(await auditRows());
    expect(stored).not.toMatch(/"code":"\d{6}"/);
    for (const value of [secret, ...recovery]) expect(stored).not.toContain(value);
  });

  it('a sign-in naming a device gets its own Account-Token, listed and revoked alone', async () => {
    const hal = await createUser(t, { email: 'hal@example.com' });
    const device = { platform: 'android', device_id: 'phone-1', device_name: 'Hal phone' };
    const phone = await signIn(hal, undefined, device);
    expect(phone.statusCode).toBe(200);
    const phoneToken = phone.json<{ token: string }>().token;
    expect(phoneToken).toMatch(/^[0-9a-f]{40}$/);
    expect(phoneToken).not.toBe(hal.token);
    expect((await signIn(hal, undefined, device)).json().token).toBe(phoneToken);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token: phoneToken })).statusCode).toBe(200);
    const listed = await t.request({ method: 'GET', url: '/api2/devices/', token: hal.token });
    expect(listed.json()).toEqual([expect.objectContaining({ platform: 'android', device_id: 'phone-1', device_name: 'Hal phone', last_login_ip: expect.stringMatching(/^10\.9\./) })]);
    expect(listed.body).not.toContain(phoneToken);
    // Bad input: incomplete or blank device fields, an unknown device.
    expect((await signIn(hal, undefined, { platform: 'android' })).statusCode).toBe(400);
    expect((await signIn(hal, undefined, { platform: ' ', device_id: 'x', device_name: 'y' })).statusCode).toBe(400);
    expect((await t.request({ method: 'DELETE', url: '/api2/devices/', token: hal.token, payload: { platform: 'android', device_id: 'nope' } })).statusCode).toBe(404);
    expect((await t.request({ method: 'DELETE', url: '/api2/devices/', token: hal.token, payload: {} })).statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token: phoneToken })).statusCode).toBe(200);

    const revoked = await t.request({ method: 'DELETE', url: '/api2/devices/', token: hal.token, payload: { platform: 'android', device_id: 'phone-1' } });
    expect(revoked.json()).toEqual({ success: true });
    expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token: phoneToken })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token: hal.token })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api2/devices/', token: hal.token })).json()).toEqual([]);

    // A logout with a device's token ends that device only; a password change ends them all.
    const laptop = (await signIn(hal, undefined, { platform: 'linux', device_id: 'lap', device_name: 'Laptop' })).json<{ token: string }>().token;
    const tablet = (await signIn(hal, undefined, { platform: 'ios', device_id: 'tab', device_name: 'Tablet' })).json<{ token: string }>().token;
    expect((await t.request({ method: 'POST', url: '/api2/logout/', token: laptop })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token: laptop })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token: tablet })).statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token: hal.token })).statusCode).toBe(200);
    const changed = await t.request({ method: 'PUT', url: '/api/v2.1/user/password/', token: hal.token, payload: { old_password: hal.password, new_password: 'another-password-1' } });
    expect(changed.statusCode).toBe(200);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token: tablet })).statusCode).toBe(401);
  });

  it('a device signing in with 2FA needs the code too', async () => {
    const ivy = await createUser(t, { email: 'ivy@example.com' });
    const { secret } = await enrol(ivy);
    const device = { platform: 'windows', device_id: 'pc', device_name: 'PC' };
    expect((await signIn(ivy, undefined, device)).statusCode).toBe(400);
    expect(await t.container.db.selectFrom('account_devices').selectAll().where('user_id', '=', ivy.id).execute()).toEqual([]);
    expect((await signIn(ivy, totpCode(secret, t.clock.now()), device)).statusCode).toBe(200);
  });

  it('force_2fa takes effect: a forced user who has not enrolled signs in, and the token serves only enrolment until they enrol', async () => {
    const kim = await createUser(t, { email: 'kim@example.com' });
    const workspaces = (token: string) => t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token });
    expect((await workspaces(kim.token)).statusCode).toBe(200);
    const phone = (await signIn(kim, undefined, { platform: 'android', device_id: 'kim-phone', device_name: 'Kim phone' })).json<{ token: string }>().token;
    const forced = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${kim.email}/two-factor-auth/`, token: admin.token, payload: { force_2fa: '1' } });
    expect(forced.statusCode).toBe(200);

    // The token in use and a device's token: every route but enrolment, the profile and logout refuses.
    for (const token of [kim.token, phone]) {
      const refused = await workspaces(token);
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({ detail: 'Two-factor authentication is required for this account: set it up at /api/v2.1/user/two-factor-auth/ first.' });
      expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token })).statusCode).toBe(200);
    }
    expect(await status(kim)).toMatchObject({ enabled: false, force_2fa: true });
    // Sign-in answers the token as the original does; it leads only to enrolment.
    const signedIn = await signIn(kim);
    expect(signedIn.statusCode).toBe(200);
    const token = signedIn.json<{ token: string }>().token;
    expect((await workspaces(token)).statusCode).toBe(403);
    // An unconfirmed enrolment is not enough.
    const begun = await t.request({ method: 'POST', url: '/api/v2.1/user/two-factor-auth/', token });
    expect(begun.statusCode).toBe(200);
    expect((await workspaces(token)).statusCode).toBe(403);
    const { secret } = begun.json<{ secret: string }>();
    const confirmed = await t.request({ method: 'PUT', url: '/api/v2.1/user/two-factor-auth/', token, payload: { code: totpCode(secret, t.clock.now()) } });
    expect(confirmed.statusCode).toBe(200);
    t.clock.advance(STEP);
    expect((await workspaces(token)).statusCode).toBe(200);
    expect((await workspaces(phone)).statusCode).toBe(200);
    expect((await signIn(kim)).statusCode).toBe(400);
    expect((await signIn(kim, totpCode(secret, t.clock.now()))).statusCode).toBe(200);

    // An admin who lifts the force frees a user who never enrolled.
    const lou = await createUser(t, { email: 'lou@example.com' });
    await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${lou.email}/two-factor-auth/`, token: admin.token, payload: { force_2fa: true } });
    expect((await workspaces(lou.token)).statusCode).toBe(403);
    // A forced admin is held back too, also on admin routes.
    await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${lou.email}/two-factor-auth/`, token: admin.token, payload: { force_2fa: false } });
    expect((await workspaces(lou.token)).statusCode).toBe(200);
    const boss = await createUser(t, { email: 'boss@example.com', admin: true });
    await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${boss.email}/two-factor-auth/`, token: admin.token, payload: { force_2fa: 1 } });
    expect((await t.request({ method: 'GET', url: '/api/v2.1/admin/users/', token: boss.token })).statusCode).toBe(403);
    expect((await t.request({ method: 'POST', url: '/api2/logout/', token: boss.token })).statusCode).toBe(200);
  });

  it('a trusted device (X-SEAFILE-2FA-TRUST-DEVICE: 1) skips the code with X-SEAFILE-S2FA for 90 days, for its user only', async () => {
    const max = await createUser(t, { email: 'max@example.com' });
    const { secret } = await enrol(max);
    const mia = await createUser(t, { email: 'mia@example.com' });
    await enrol(mia);
    const login = (user: TestUser, headers: Record<string, string>) =>
      t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: user.email, password: user.password }, headers, remoteAddress: nextIp() });

    // Trust needs the code: the header alone asks for it; a code without the header trusts nothing.
    const noCode = await login(max, { 'x-seafile-2fa-trust-device': '1' });
    expect(noCode.statusCode).toBe(400);
    expect(noCode.headers['x-seafile-s2fa']).toBeUndefined();
    const untrusted = await login(max, { 'x-seafile-otp': totpCode(secret, t.clock.now()), 'x-seafile-2fa-trust-device': 'yes' });
    expect(untrusted.statusCode).toBe(200);
    expect(untrusted.headers['x-seafile-s2fa']).toBeUndefined();
    t.clock.advance(STEP);

    const trusted = await login(max, { 'x-seafile-otp': totpCode(secret, t.clock.now()), 'x-seafile-2fa-trust-device': '1' });
    expect(trusted.statusCode).toBe(200);
    const key = String(trusted.headers['x-seafile-s2fa']);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const stored = await t.container.db.selectFrom('two_factor_trusted_devices').selectAll().where('user_id', '=', max.id).execute();
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(key);

    // The key skips the code and is answered back; a wrong key, or another user's, does not.
    const skipped = await login(max, { 'x-seafile-s2fa': key });
    expect(skipped.statusCode).toBe(200);
    expect(skipped.json()).toEqual({ token: trusted.json<{ token: string }>().token });
    expect(skipped.headers['x-seafile-s2fa']).toBe(key);
    for (const wrong of [key.replace(/^./, key[0] === 'a' ? 'b' : 'a'), 'garbage', '']) {
      const refused = await login(max, { 'x-seafile-s2fa': wrong });
      expect(refused.statusCode).toBe(400);
      expect(refused.headers['x-seafile-otp']).toBe('required');
    }
    expect((await login(mia, { 'x-seafile-s2fa': key })).statusCode).toBe(400);
    // A wrong password is still wrong.
    const wrongPassword = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: max.email, password: 'not-the-password' }, headers: { 'x-seafile-s2fa': key }, remoteAddress: nextIp() });
    expect(wrongPassword.json()).toEqual({ non_field_errors: ['Unable to login with provided credentials.'] });

    // Bounded: the key expires after 90 days.
    t.clock.advance(90 * 86_400_000 - 60_000);
    expect((await login(max, { 'x-seafile-s2fa': key })).statusCode).toBe(200);
    t.clock.advance(60_000);
    expect((await login(max, { 'x-seafile-s2fa': key })).statusCode).toBe(400);

    // A password change forgets every trusted device; so does turning 2FA off.
    const again = String((await login(max, { 'x-seafile-otp': totpCode(secret, t.clock.now()), 'x-seafile-2fa-trust-device': '1' })).headers['x-seafile-s2fa']);
    expect((await login(max, { 'x-seafile-s2fa': again })).statusCode).toBe(200);
    const fresh = (await login(max, { 'x-seafile-s2fa': again })).json<{ token: string }>().token;
    const changed = await t.request({ method: 'PUT', url: '/api/v2.1/user/password/', token: fresh, payload: { old_password: max.password, new_password: 'max-new-password' } });
    expect(changed.statusCode).toBe(200);
    const maxNew = { ...max, password: 'max-new-password' };
    expect((await login(maxNew, { 'x-seafile-s2fa': again })).statusCode).toBe(400);
    t.clock.advance(STEP);
    const third = String((await login(maxNew, { 'x-seafile-otp': totpCode(secret, t.clock.now()), 'x-seafile-2fa-trust-device': '1' })).headers['x-seafile-s2fa']);
    expect((await t.request({ method: 'DELETE', url: `/api2/two-factor-auth/${max.email}/`, token: admin.token })).statusCode).toBe(200);
    expect(await t.container.db.selectFrom('two_factor_trusted_devices').selectAll().where('user_id', '=', max.id).execute()).toEqual([]);
    expect(third).toMatch(/^[0-9a-f]{64}$/);
  });
});
