import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/modules/accounts/index.js';
import { ConsoleSuite, ADMIN, signIn, step } from './browser.js';

const BASE = 'Scoped';

/**
 * Issue 33 in the console, in headless Chromium against a real server: an API-Token created with
 * scope fields (tables, operations, expiry, networks, rate), and two-factor enrolment with a QR code,
 * after which signing in asks for the code.
 */
describe('console: scoped API-Tokens and two-factor sign-in (headless Chromium)', () => {
  const s = new ConsoleSuite(BASE);
  const { call } = s;

  beforeAll(async () => {
    await s.start();
    await s.openPage({ viewport: { width: 1280, height: 900 } }, { signedIn: false });
    await s.createBase();
  }, 60_000);

  afterAll(() => s.close());

  it('creates an API-Token with tables, operations, expiry, networks and a rate', async () => {
    await step(s.page, 'scoped-token', async () => {
      await signIn(s.page, s.url, ADMIN.email, ADMIN.password);
      await s.page.goto(`${s.url}/#/base/${s.workspaceId}/${BASE}/integrations`);
      await s.page.getByLabel('App name').fill('reporting');
      await s.page.getByLabel('Token permission').selectOption('r');
      await s.page.getByText('Scope (optional)').click();
      await s.page.getByLabel('Token tables').fill('Table1');
      await s.page.getByLabel('Operation read rows').check();
      await s.page.getByLabel('Operation SQL').check();
      await s.page.getByLabel('Token expiry').fill('2099-12-31T12:00');
      await s.page.getByLabel('Token networks').fill('127.0.0.1/32, 10.0.0.0/8');
      await s.page.getByLabel('Token rate limit').fill('30');
      await s.page.getByRole('button', { name: 'Create API-Token' }).click();
      await s.page.getByTestId('new-api-token').waitFor();
      await s.page.getByRole('table', { name: 'API-Tokens' }).getByText('tables: Table1').waitFor();
    });
    const tokens = await call<{ api_tokens: Array<Record<string, unknown>> }>(`/api/v2.1/workspace/${s.workspaceId}/dtable/${BASE}/api-tokens/`);
    expect(tokens.data.api_tokens).toEqual([
      expect.objectContaining({ app_name: 'reporting', permission: 'r', tables: ['Table1'], operations: ['read_rows', 'sql'], allowed_networks: ['127.0.0.1/32', '10.0.0.0/8'], rate_limit: 30 }),
    ]);
    expect(String(tokens.data.api_tokens[0]!.expires_at)).toMatch(/^2099-12-31/);
  });

  it('enrols in two-factor sign-in with a QR code; signing in then asks for the code', async () => {
    let secret = '';
    await step(s.page, 'two-factor-enrol', async () => {
      await s.page.getByRole('link', { name: 'Settings' }).click();
      await s.page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      await s.page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
      secret = (await s.page.getByTestId('totp-secret').textContent()) ?? '';
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      await s.page.getByLabel('Code', { exact: true }).fill(totpCode(secret, Date.now()));
      await s.page.getByRole('button', { name: 'Turn on' }).click();
      const codes = (await s.page.getByTestId('recovery-codes').textContent()) ?? '';
      expect(codes.trim().split('\n')).toHaveLength(10);
      await s.page.getByText('10 recovery codes left').waitFor();
    });
    expect((await call<{ enabled: boolean }>('/api/v2.1/user/two-factor-auth/')).data.enabled).toBe(true);
    await step(s.page, 'two-factor-sign-in', async () => {
      await s.page.getByRole('button', { name: 'Sign out' }).click();
      await s.page.getByLabel('E-mail').fill(ADMIN.email);
      await s.page.getByLabel('Password').fill(ADMIN.password);
      await s.page.getByRole('button', { name: 'Sign in' }).click();
      await s.page.getByText('Two factor auth token is missing.').waitFor();
      // The code of the next step: the enrolment used this step's (a code is good once).
      await s.page.getByLabel('Two-factor code (or a recovery code)').fill(totpCode(secret, Date.now() + 30_000));
      await s.page.getByRole('button', { name: 'Sign in' }).click();
      await s.page.getByRole('button', { name: 'Sign out' }).waitFor();
    });
  });
});
