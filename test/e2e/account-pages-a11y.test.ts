import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/modules/accounts/index.js';
import { ConsoleSuite, ADMIN, signIn, step } from './browser.js';
import { invisibleFocus, seriousAxeViolations, unnamedControls } from './accessibility.js';

const GROUP = 'Access team';
const MODES = [
  { scheme: 'light', width: 1280, height: 800 },
  { scheme: 'dark', width: 1280, height: 800 },
  { scheme: 'light', width: 390, height: 844 },
  { scheme: 'dark', width: 390, height: 844 },
] as const;
const userOf = (i: number) => ({ email: `tf${i}@a11y.test`, password: `tf-password-${i}1`, name: `Two Factor ${i}` });
/** A user whom the admin forces to two-factor sign-in: the enrolment is the only page at sign-in. */
const forcedOf = (i: number) => ({ email: `forced${i}@a11y.test`, password: `forced-password-${i}1`, name: `Forced ${i}` });

/**
 * Issue #29, "an axe-core check of each page reports no serious violations; focus is visible", for the
 * pages the walk in first-contact does not reach: the group list and a group's page, and the three
 * two-factor pages (enrolment with the QR code, the recovery codes, signing in with a code), in
 * Settings and as the page a user forced to two-factor sign-in gets at sign-in. Each in
 * light and dark mode, at desktop size and at 390×844, as first-contact checks the others.
 */
describe('console: group and two-factor pages: axe and visible focus, light and dark, desktop and phone (headless Chromium)', () => {
  const s = new ConsoleSuite('A11y');
  const { call } = s;
  let groupId = 0;

  /** No serious axe violation, no control without a name, no control reached by Tab without a visible focus. */
  const checkPage = async (page: Page, name: string, mode: (typeof MODES)[number], presses = 25) => {
    const where = { name, scheme: mode.scheme, width: mode.width };
    expect({ ...where, violations: await seriousAxeViolations(page) }).toEqual({ ...where, violations: [] });
    expect({ ...where, unnamed: await unnamedControls(page) }).toEqual({ ...where, unnamed: [] });
    if (mode.width === 390) expect({ ...where, scrollWidth: await page.evaluate(() => document.documentElement.scrollWidth) }).toEqual({ ...where, scrollWidth: 390 });
    expect({ ...where, invisibleFocus: await invisibleFocus(page, presses) }).toEqual({ ...where, invisibleFocus: [] });
  };

  beforeAll(async () => {
    await s.start();
    for (let i = 0; i < MODES.length; i++) {
      for (const user of [userOf(i), forcedOf(i)]) expect((await call('/api/v2.1/admin/users/', { method: 'POST', body: user })).status).toBe(200);
      expect((await call(`/api/v2.1/admin/users/${forcedOf(i).email}/two-factor-auth/`, { method: 'PUT', body: { force_2fa: 1 } })).status).toBe(200);
    }
    const group = await call<{ id: number }>('/api/v2.1/groups/', { method: 'POST', body: { name: GROUP } });
    expect(group.status).toBe(201);
    groupId = group.data.id;
    expect((await call(`/api/v2.1/groups/${groupId}/members/`, { method: 'POST', body: { email: userOf(0).email } })).status).toBeLessThan(300);
    const ws = (await call<{ workspace_list: Array<{ id: number; group_id?: number }> }>('/api/v2.1/workspaces/')).data.workspace_list.find((w) => w.group_id === groupId)!;
    expect((await call('/api/v2.1/dtables/', { method: 'POST', body: { name: 'Team base', workspace_id: ws.id } })).status).toBe(201);
  }, 60_000);

  afterAll(() => s.close());

  it.each(MODES.map((mode, i) => [`${mode.scheme} ${mode.width}×${mode.height}`, mode, i] as const))('%s: the groups list, a group’s page, two-factor enrolment, recovery codes and sign-in with a code', async (_label, mode, i) => {
    const user = userOf(i);
    const context = await s.browser.newContext({ viewport: { width: mode.width, height: mode.height }, colorScheme: mode.scheme });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    try {
      await step(page, `pages-${mode.scheme}-${mode.width}`, async () => {
        await signIn(page, s.url, ADMIN.email, ADMIN.password);
        await page.goto(`${s.url}/#/groups`);
        await page.getByRole('link', { name: GROUP }).waitFor();
        await checkPage(page, 'groups', mode);
        await page.goto(`${s.url}/#/groups/${groupId}`);
        await page.getByRole('heading', { name: `Group “${GROUP}”` }).waitFor();
        await page.getByRole('table', { name: 'Members' }).getByText(userOf(0).email).waitFor();
        await page.getByRole('list', { name: 'Group bases' }).getByRole('link', { name: 'Team base' }).waitFor();
        await checkPage(page, 'group', mode, 40);
        await page.getByRole('button', { name: 'Sign out' }).click();

        // Two-factor enrolment: the QR code and the secret.
        await signIn(page, s.url, user.email, user.password);
        await page.goto(`${s.url}/#/settings`);
        await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
        await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
        const secret = (await page.getByTestId('totp-secret').textContent()) ?? '';
        await checkPage(page, 'two-factor-enrol', mode, 40);
        // The recovery codes, shown once.
        await page.getByLabel('Code', { exact: true }).fill(totpCode(secret, Date.now()));
        await page.getByRole('button', { name: 'Turn on' }).click();
        await page.getByTestId('recovery-codes').waitFor();
        await checkPage(page, 'recovery-codes', mode, 40);
        // Signing in asks for the code.
        await page.getByRole('button', { name: 'Sign out' }).click();
        await page.getByLabel('E-mail').fill(user.email);
        await page.getByLabel('Password').fill(user.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        const codeField = page.getByLabel('Two-factor code (or a recovery code)');
        await codeField.waitFor();
        await checkPage(page, 'sign-in-code', mode, 8);
        await codeField.fill(totpCode(secret, Date.now() + 30_000));
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('button', { name: 'Sign out' }).waitFor();
        await page.getByRole('button', { name: 'Sign out' }).click();

        // Forced: the enrolment is the page shown at sign-in, the recovery codes with "Continue".
        const forced = forcedOf(i);
        await page.getByLabel('E-mail').fill(forced.email);
        await page.getByLabel('Password').fill(forced.password);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByText('Your administrator asks you to turn on two-factor sign-in.').waitFor();
        await checkPage(page, 'forced-two-factor', mode, 8);
        await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
        const forcedSecret = (await page.getByTestId('totp-secret').textContent()) ?? '';
        await checkPage(page, 'forced-two-factor-enrol', mode, 12);
        await page.getByLabel('Code', { exact: true }).fill(totpCode(forcedSecret, Date.now()));
        await page.getByRole('button', { name: 'Turn on' }).click();
        await page.getByTestId('recovery-codes').waitFor();
        await checkPage(page, 'forced-recovery-codes', mode, 12);
        await page.getByRole('button', { name: 'Continue' }).click();
        await page.getByRole('link', { name: 'Settings' }).waitFor();
      });
    } finally {
      await context.close();
    }
  }, 120_000);
});
