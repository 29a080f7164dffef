import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { DIALECTS } from '../helpers/index.js';
import { ADMIN, apiCaller, launchBrowser, signIn, startConsoleServer, step, newConsolePage, closeConsole, adminSignIn } from './browser.js';

const MEMBER = { email: 'member@console.test', password: 'member-password-1', name: 'Mia Member' };
const VIEWER = { email: 'viewer@console.test', password: 'viewer-password-1', name: 'Vic Viewer' };

/**
 * The console's group pages and group/view sharing in a real headless Chromium against a listening
 * server, on each dialect (on PostgreSQL startConsoleServer gives the server a database of its own).
 */
describe.each(DIALECTS)('web console: groups (headless Chromium, %s)', () => {
  let server: RunningServer;
  let url: string;
  let browser: Browser;
  let page: Page;
  let adminToken: string;
  const call = apiCaller(() => url, () => adminToken);

  beforeAll(async () => {
    ({ server, url } = await startConsoleServer());
    browser = await launchBrowser();
    page = await newConsolePage(browser, { viewport: { width: 1280, height: 800 } });
    page.on('dialog', (d) => void d.accept());
    adminToken = await adminSignIn(url);
    for (const u of [MEMBER, VIEWER]) expect((await call('/api/v2.1/admin/users/', { method: 'POST', body: u })).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await closeConsole(browser, server);
  });

  it('creates a group, adds a member, makes them admin, creates a base in the group; the member sees it', async () => {
    await step(page, 'groups-create', async () => {
      await signIn(page, url, ADMIN.email, ADMIN.password);
      await page.getByRole('link', { name: 'Groups' }).click();
      await page.getByLabel('New group name').fill('Console team');
      await page.getByRole('button', { name: 'Create group' }).click();
      await page.getByRole('link', { name: 'Console team' }).click();
      await page.getByRole('heading', { name: 'Group “Console team”' }).waitFor();
    });
    await step(page, 'groups-members', async () => {
      await page.getByLabel('Member e-mail').fill(MEMBER.email);
      await page.getByRole('button', { name: 'Add member' }).click();
      const members = page.getByRole('table', { name: 'Members' });
      await members.getByText(MEMBER.email).waitFor();
      await page.getByLabel(`Role of ${MEMBER.email}`).selectOption('admin');
      await expect.poll(async () => (await call<Array<{ contact_email: string; role: string }>>(`/api/v2.1/groups/${await groupId()}/members/`)).data.find((m) => m.contact_email === MEMBER.email)?.role).toBe('Admin');
    });
    await step(page, 'groups-base', async () => {
      await page.getByLabel('New base name').fill('Team base');
      await page.getByRole('button', { name: 'Create base in group' }).click();
      await page.getByRole('list', { name: 'Group bases' }).getByRole('link', { name: 'Team base' }).waitFor();
    });
    // The member sees the group's workspace on their bases page.
    const memberPage = await browser.newPage();
    try {
      await signIn(memberPage, url, MEMBER.email, MEMBER.password);
      await memberPage.getByRole('heading', { name: 'Group: Console team' }).waitFor();
      await memberPage.getByRole('listitem', { name: 'Base Team base' }).waitFor();
    } finally {
      await memberPage.close();
    }
  });

  it('shares a personal base with the group and one of its views with a user', async () => {
    await call('/api/v2.1/dtables/', { method: 'POST', body: { name: 'Own base' } });
    const ws = (await call<{ workspace_list: Array<{ id: number; type: string }> }>('/api/v2.1/workspaces/')).data.workspace_list.find((w) => w.type === 'personal')!;
    await step(page, 'groups-share', async () => {
      await page.goto(`${url}/#/base/${ws.id}/Own%20base/share`);
      await page.getByLabel('Group', { exact: true }).selectOption({ label: 'Console team' });
      await page.getByLabel('Group permission').selectOption('rw');
      await page.getByRole('button', { name: 'Share with group' }).click();
      await page.getByRole('table', { name: 'Shared with groups' }).getByText('Console team').waitFor();
    });
    await step(page, 'groups-view-share', async () => {
      await page.getByLabel('View recipient e-mail').fill(VIEWER.email);
      await page.getByRole('button', { name: 'Share view' }).click();
      await page.getByRole('list', { name: 'Shared views' }).getByText(VIEWER.name).waitFor();
    });
    const shares = await call<{ dtable_group_share_list: Array<{ group_name: string; permission: string }> }>(`/api/v2.1/workspace/${ws.id}/dtable/Own%20base/group-shares/`);
    expect(shares.data.dtable_group_share_list).toEqual([{ group_id: await groupId(), group_name: 'Console team', permission: 'rw' }]);
    const views = await call<{ user_view_share_list: Array<{ to_user_name: string; permission: string }> }>(`/api/v2.1/workspace/${ws.id}/dtable/Own%20base/user-view-shares/`);
    expect(views.data.user_view_share_list).toMatchObject([{ to_user_name: VIEWER.name, permission: 'r' }]);
    await page.screenshot({ path: 'docs/screenshots/share-groups.png', fullPage: true });
  });

  async function groupId(): Promise<number> {
    return (await call<Array<{ id: number; name: string }>>('/api/v2.1/groups/')).data.find((g) => g.name === 'Console team')!.id;
  }
});
