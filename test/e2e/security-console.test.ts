import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { totpCode } from '../../src/modules/accounts/index.js';
import { ADMIN, apiCaller, launchBrowser, signIn, startConsoleServer, step, newConsolePage, closeConsole, adminSignIn, createBase } from './browser.js';

const BASE = 'Scoped';

/**
 * Issue 33 in the console, in headless Chromium against a real server: an API-Token created with
 * scope fields (tables, operations, expiry, networks, rate), and two-factor enrolment with a QR code,
 * after which signing in asks for the code.
 */
describe('console: scoped API-Tokens and two-factor sign-in (headless Chromium)', () => {
  let server: RunningServer;
  let url: string;
  let browser: Browser;
  let page: Page;
  let adminToken: string;
  let workspaceId: number;
  const call = apiCaller(() => url, () => adminToken);

  beforeAll(async () => {
    ({ server, url } = await startConsoleServer());
    browser = await launchBrowser();
    page = await newConsolePage(browser, { viewport: { width: 1280, height: 900 } });
    adminToken = await adminSignIn(url);
    ({ workspaceId } = await createBase(call, BASE));
  }, 60_000);

  afterAll(() => closeConsole(browser, server));

  it('creates an API-Token with tables, operations, expiry, networks and a rate', async () => {
    await step(page, 'scoped-token', async () => {
      await signIn(page, url, ADMIN.email, ADMIN.password);
      await page.goto(`${url}/#/base/${workspaceId}/${BASE}/integrations`);
      await page.getByLabel('App name').fill('reporting');
      await page.getByLabel('Token permission').selectOption('r');
      await page.getByText('Scope (optional)').click();
      await page.getByLabel('Token tables').fill('Table1');
      await page.getByLabel('Operation read rows').check();
      await page.getByLabel('Operation SQL').check();
      await page.getByLabel('Token expiry').fill('2099-12-31T12:00');
      await page.getByLabel('Token networks').fill('127.0.0.1/32, 10.0.0.0/8');
      await page.getByLabel('Token rate limit').fill('30');
      await page.getByRole('button', { name: 'Create API-Token' }).click();
      await page.getByTestId('new-api-token').waitFor();
      await page.getByRole('table', { name: 'API-Tokens' }).getByText('tables: Table1').waitFor();
    });
    const tokens = await call<{ api_tokens: Array<Record<string, unknown>> }>(`/api/v2.1/workspace/${workspaceId}/dtable/${BASE}/api-tokens/`);
    expect(tokens.data.api_tokens).toEqual([
      expect.objectContaining({ app_name: 'reporting', permission: 'r', tables: ['Table1'], operations: ['read_rows', 'sql'], allowed_networks: ['127.0.0.1/32', '10.0.0.0/8'], rate_limit: 30 }),
    ]);
    expect(String(tokens.data.api_tokens[0]!.expires_at)).toMatch(/^2099-12-31/);
  });

  it('enrols in two-factor sign-in with a QR code; signing in then asks for the code', async () => {
    let secret = '';
    await step(page, 'two-factor-enrol', async () => {
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
      secret = (await page.getByTestId('totp-secret').textContent()) ?? '';
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      await page.getByLabel('Code', { exact: true }).fill(totpCode(secret, Date.now()));
      await page.getByRole('button', { name: 'Turn on' }).click();
      const codes = (await page.getByTestId('recovery-codes').textContent()) ?? '';
      expect(codes.trim().split('\n')).toHaveLength(10);
      await page.getByText('10 recovery codes left').waitFor();
    });
    expect((await call<{ enabled: boolean }>('/api/v2.1/user/two-factor-auth/')).data.enabled).toBe(true);
    await step(page, 'two-factor-sign-in', async () => {
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('E-mail').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Two factor auth token is missing.').waitFor();
      // The code of the next step: the enrolment used this step's (a code is good once).
      await page.getByLabel('Two-factor code (or a recovery code)').fill(totpCode(secret, Date.now() + 30_000));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
    });
  });
});
