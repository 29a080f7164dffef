import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { totpCode } from '../../src/modules/accounts/index.js';
import { startTestIdp, type TestIdp } from '../helpers/oidc-idp.js';
import { apiCaller, freePort, launchBrowser, startConsoleServer, step, newConsolePage, adminSignIn } from './browser.js';

/**
 * Issue 33 in the console, in headless Chromium against a real server and a real OpenID Connect
 * provider (`oidc-provider` on its own port): the single sign-on button signs a new user in (the
 * browser follows the provider's redirects and comes back with the token in the URL fragment), and a
 * user an admin forced to two-factor sign-in is led to enrol before anything else.
 */
describe('console: single sign-on and forced two-factor sign-in (headless Chromium)', () => {
  let server: RunningServer;
  let idp: TestIdp;
  let url: string;
  let browser: Browser;
  let page: Page;
  let adminToken: string;
  const call = apiCaller(() => url, () => adminToken);

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    idp = await startTestIdp(`${url}/api/v2.1/sso/oidc/callback/`);
    ({ server } = await startConsoleServer({
      PORT: String(port),
      PUBLIC_URL: url,
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_REDIRECT_URI: `${url}/api/v2.1/sso/oidc/callback/`,
      OIDC_ALLOW_HTTP: 'true',
    }));
    browser = await launchBrowser();
    page = await newConsolePage(browser, { viewport: { width: 1280, height: 900 } });
    adminToken = await adminSignIn(url);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await idp?.close();
  });

  it("signs in with the provider's button: a new user is created and the token leaves the address bar", async () => {
    idp.signInAs({ sub: 'ann-1', email: 'ann@example.com', email_verified: true, name: 'Ann Provider' });
    await step(page, 'sso-sign-in', async () => {
      await page.goto(url);
      await page.getByRole('link', { name: 'Sign in with single sign-on' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await page.getByText('Ann Provider').waitFor();
    });
    expect(new URL(page.url()).hash).toBe('#/');
    const token = await page.evaluate(() => Object.values(window.sessionStorage).find((value) => /^[0-9a-f]{40}$/.test(value)) ?? null);
    expect(token).toMatch(/^[0-9a-f]{40}$/);
    const me = await call<{ contact_email: string; name: string }>('/api/v2.1/user/', { token: token! });
    expect(me.data).toMatchObject({ contact_email: 'ann@example.com', name: 'Ann Provider' });
    const logins = await call<{ login_log_list: Array<{ name: string; log_success: boolean }> }>('/api/v2.1/admin/logs/login-logs/');
    expect(logins.data.login_log_list).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'ann@example.com', log_success: true })]));
    await page.getByRole('button', { name: 'Sign out' }).click();
  });

  it('a user forced to two-factor sign-in is led to enrol at sign-in, then continues to the console', async () => {
    const user = { email: 'forced@example.com', password: 'forced-password-1' };
    expect((await call('/api/v2.1/admin/users/', { method: 'POST', body: { email: user.email, password: user.password } })).status).toBeLessThan(300);
    expect((await call(`/api/v2.1/admin/users/${user.email}/two-factor-auth/`, { method: 'PUT', body: { force_2fa: 1 } })).status).toBe(200);
    await step(page, 'forced-two-factor', async () => {
      await page.goto(url);
      await page.getByLabel('E-mail').fill(user.email);
      await page.getByLabel('Password').fill(user.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Your administrator asks you to turn on two-factor sign-in.').waitFor();
      // Nothing else of the console is reachable yet.
      expect(await page.getByRole('link', { name: 'Settings' }).count()).toBe(0);
      await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      const secret = (await page.getByTestId('totp-secret').textContent()) ?? '';
      await page.getByLabel('Code', { exact: true }).fill(totpCode(secret, Date.now()));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByTestId('recovery-codes').waitFor();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('link', { name: 'Settings' }).waitFor();
    });
    // The console's token now serves every route (before the enrolment: 403 but for enrolment).
    const token = await page.evaluate(() => Object.values(window.sessionStorage).find((value) => /^[0-9a-f]{40}$/.test(value)) ?? null);
    expect((await call('/api/v2.1/user/two-factor-auth/', { token: token! })).data).toMatchObject({ enabled: true, force_2fa: true });
    expect((await call('/api/v2.1/workspaces/', { token: token! })).status).toBe(200);
  });
});
