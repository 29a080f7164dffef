import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { Receiver } from '../http/webhooks-support.js';
import { ADMIN, apiCaller, launchBrowser, signIn, startConsoleServer, step, newConsolePage, adminSignIn } from './browser.js';
import { BASE, BOB, accessibleNames, adminDeletesInvalidRule, dismissedDelete, adminUsersAndWebhooks, copyAndPassword, liveGridUpdates, rowComments, type ConsoleRun } from './console-steps.js';

const require = createRequire(import.meta.url);
interface SeaTableBase {
  auth(): Promise<void>;
  appendRow(table: string, row: Record<string, unknown>): Promise<Record<string, unknown>>;
  listRows(table: string): Promise<Array<Record<string, unknown>>>;
}
const { Base } = require('seatable-api') as { Base: new (config: { server: string; APIToken: string }) => SeaTableBase };


/**
 * The console in a real headless Chromium against a listening server on SQLite: one browser, one
 * server, steps in order (each builds on the last, as a person would use it).
 */
describe('web console (headless Chromium)', () => {
  let server: RunningServer;
  let url: string;
  let browser: Browser;
  let page: Page;
  let adminToken: string;
  let receiver: Receiver;
  let workspaceId: number;
  let baseUuid: string;
  let script: SeaTableBase;
  const frames: string[] = [];
  const dialogs: string[] = [];
  const confirmations: { dismissNext: boolean; promptText?: string } = { dismissNext: false };
  const run = (): ConsoleRun => ({ url, browser, page, call, gw, workspaceId, frames, dialogs, confirmations });

  const call = apiCaller(() => url, () => adminToken);
  const baseToken = async () =>
    (await call<{ access_token: string }>(`/api/v2.1/workspace/${workspaceId}/dtable/${BASE}/access-token/`)).data.access_token;
  const gw = async <T>(suffix: string, init: { method?: string; body?: unknown } = {}) =>
    call<T>(`/api-gateway/api/v2/dtables/${baseUuid}/${suffix}`, { ...init, token: await baseToken() });
  const cell = (row: number, col: number) => page.locator(`.grid [role=row][aria-rowindex="${row + 1}"] [role=gridcell][aria-colindex="${col}"]`);

  beforeAll(async () => {
    ({ server, url } = await startConsoleServer());
    browser = await launchBrowser();
    page = await newConsolePage(browser, { viewport: { width: 1280, height: 800 } });
    // Confirmations are accepted, unless a step asks to dismiss the next one.
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void (confirmations.dismissNext ? d.dismiss() : d.accept(d.type() === 'prompt' ? confirmations.promptText : undefined));
      confirmations.dismissNext = false;
    });
    page.on('websocket', (ws) => ws.on('framereceived', (frame) => void frames.push(String(frame.payload))));
    adminToken = await adminSignIn(url);
    receiver = await new Receiver().start();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.stop();
  });

  it('serves the console at / with a CSP and immutable hashed assets; unknown /api paths stay JSON 404', async () => {
    const index = await fetch(`${url}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await index.text();
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const js = await fetch(url + asset!);
    expect(js.status).toBe(200);
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const missing = await fetch(`${url}/api/v2.1/no-such-thing/`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error_msg: 'Not found.' });
    expect((await fetch(`${url}/api-gateway/nothing`)).status).toBe(404);
  });

  it('signs in (wrong password shows the API error), creates a base and opens it', async () => {
    await step(page, 'sign-in', async () => {
      await page.goto(url);
      await page.getByLabel('E-mail').fill(ADMIN.email);
      await page.getByLabel('Password').fill('wrong-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'Unable to login with provided credentials.' }).waitFor();
      await signIn(page, url, ADMIN.email, ADMIN.password);
      expect(await page.evaluate(() => window.location.href)).not.toContain(adminToken);
      await page.getByLabel('New base name').fill(BASE);
      await page.getByRole('button', { name: 'Create base' }).click();
      await page.getByRole('link', { name: BASE, exact: true }).click();
      await page.getByRole('grid', { name: 'Rows of Table1' }).waitFor();
    });
    const list = await call<{ workspace_list: Array<{ table_list?: Array<{ name: string; uuid: string; workspace_id: number }> }> }>('/api/v2.1/workspaces/');
    const base = list.data.workspace_list.flatMap((w) => w.table_list ?? []).find((b) => b.name === BASE)!;
    expect(base).toBeDefined();
    workspaceId = base.workspace_id;
    baseUuid = base.uuid;
  });

  it('changes the user’s own settings, signs out and back in', async () => {
    await step(page, 'settings', async () => {
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByLabel('Name').fill('Ada Admin');
      await page.getByLabel('E-mail me about notifications').uncheck();
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await page.locator('header .who').filter({ hasText: 'Ada Admin' }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      await signIn(page, url, ADMIN.email, ADMIN.password);
      await page.getByRole('link', { name: BASE, exact: true }).click();
      await page.getByRole('grid', { name: 'Rows of Table1' }).waitFor();
    });
    const me = await call<{ name: string; email_notification: boolean }>('/api/v2.1/user/');
    expect(me.data).toMatchObject({ name: 'Ada Admin', email_notification: false });
  });

  it('adds columns of each type and edits cells in place', async () => {
    const columns: Array<[string, string, string?]> = [
      ['Number', 'number'],
      ['Status', 'single-select', 'todo, done'],
      ['Tags', 'multiple-select', 'red, blue'],
      ['Done', 'checkbox'],
      ['Due', 'date'],
      ['Notes', 'long-text'],
      ['Stars', 'rate', '5'],
      ['Site', 'url'],
      ['Mail', 'email'],
      ['Spent', 'duration'],
      ['Owner', 'collaborator'],
      ['Created', 'ctime'],
    ];
    await step(page, 'columns', async () => {
      await page.getByRole('button', { name: 'Columns' }).click();
      for (const [name, type, extra] of columns) {
        await page.getByLabel('Column name').fill(name);
        await page.getByLabel('Column type').selectOption(type);
        if (extra) await page.locator('form[aria-label="Add column"] input').nth(1).fill(extra);
        await page.getByRole('button', { name: 'Add column' }).click();
        await page.locator('.panel table').getByText(name, { exact: true }).waitFor();
      }
    });
    const meta = await gw<{ metadata: { tables: Array<{ columns: Array<{ name: string; type: string }> }> } }>('metadata/');
    const types = Object.fromEntries(meta.data.metadata.tables[0]!.columns.map((c) => [c.name, c.type]));
    for (const [name, type] of columns) expect(types[name]).toBe(type);

    // A new base starts with a few empty rows (as the original's); start this table from none.
    const blank = await gw<{ rows: Array<{ _id: string }> }>('rows/?table_name=Table1');
    await gw('rows/', { method: 'DELETE', body: { table_name: 'Table1', row_ids: blank.data.rows.map((r) => r._id) } });
    await step(page, 'cells', async () => {
      await page.reload();
      await page.getByText('0 rows').waitFor();
      await page.getByRole('button', { name: '+ Row' }).click();
      await page.getByText('1 rows').waitFor();
      await page.getByRole('button', { name: '+ Row' }).click();
      await page.getByText('2 rows').waitFor();
      const type = async (row: number, col: number, text: string) => {
        await cell(row, col).dblclick();
        const editor = cell(row, col).locator('input');
        await editor.fill(text);
        await editor.press('Enter');
        await editor.waitFor({ state: 'detached' });
        await expect.poll(() => cell(row, col).innerText()).toContain(text);
      };
      await type(1, 2, 'Alpha');
      await type(1, 3, '7');
      await type(2, 2, 'Beta');
      await type(2, 3, '3');
      const saved = page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().includes('/rows/') && (r.request().postData() ?? '').includes('"Done"'));
      await cell(1, 6).getByRole('checkbox', { name: 'Done of row' }).click();
      expect((await saved).request().postDataJSON()).toMatchObject({ updates: [{ row: { Done: true } }] });
      await expect.poll(() => cell(1, 6).getByRole('checkbox', { name: 'Done of row' }).isChecked()).toBe(true);
      await cell(1, 4).dblclick();
      await page.getByLabel('Edit Status').selectOption('done');
      await expect.poll(() => cell(1, 4).innerText()).toBe('done');
      // Keyboard: move with the arrows, Enter opens the editor, Enter saves.
      await cell(1, 2).click();
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await cell(2, 2).locator('input').fill('Beta two');
      await page.keyboard.press('Enter');
      await expect.poll(() => cell(2, 2).innerText()).toBe('Beta two');
    });
    await expect
      .poll(async () => {
        const rows = await gw<{ rows: Array<Record<string, unknown>> }>('rows/?table_name=Table1&convert_keys=true');
        return rows.data.rows.find((r) => r.Name === 'Alpha');
      })
      .toMatchObject({ Number: 7, Status: 'done', Done: true });
    expect((await gw<{ rows: Array<Record<string, unknown>> }>('rows/?table_name=Table1&convert_keys=true')).data.rows.map((r) => r.Name)).toContain('Beta two');
    mkdirSync('docs/screenshots', { recursive: true });
    await page.screenshot({ path: 'docs/screenshots/base-editor.png' });
  });

  it('keeps the next column name typed while the previous add is still being answered', async () => {
    const form = page.locator('form[aria-label="Add column"]');
    if (!(await form.isVisible())) await page.getByRole('button', { name: 'Columns' }).click();
    // The server commits the column (and the live channel shows it) while its answer is held back.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/columns/', async (route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      const response = await route.fetch();
      await released;
      await route.fulfill({ response });
    });
    try {
      await page.getByLabel('Column name').fill('Held');
      await page.getByLabel('Column type').selectOption('text');
      await page.getByRole('button', { name: 'Add column' }).click();
      await page.locator('.panel table').getByText('Held', { exact: true }).waitFor();
      await page.getByLabel('Column name').fill('Typed meanwhile');
      const answered = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/columns/'));
      release();
      await answered;
      await expect.poll(() => page.getByRole('button', { name: 'Add column' }).isEnabled()).toBe(true);
      expect(await page.getByLabel('Column name').inputValue()).toBe('Typed meanwhile');
    } finally {
      release();
      await page.unroute('**/columns/');
      await gw('columns/', { method: 'DELETE', body: { table_name: 'Table1', column: 'Held' } });
      await page.getByLabel('Column name').fill('');
    }
  });

  it('filters a view: only matching rows stay in the grid, and the view is saved', async () => {
    await step(page, 'filter', async () => {
      await page.getByRole('button', { name: /Filter & sort/ }).click();
      await page.getByRole('button', { name: '+ Filter' }).click();
      await page.getByLabel('Filter 1 column').selectOption({ label: 'Number' });
      await page.getByLabel('Filter 1 predicate').selectOption('greater');
      await page.getByLabel('Filter 1 value').fill('5');
      await page.getByRole('button', { name: 'Save view' }).click();
      await page.getByText('1 rows').waitFor();
      // The grid re-renders after the save: wait until it shows the match and not the others (it may be empty between).
      const shown = async () => {
        const text = await page.getByRole('grid').innerText();
        return { alpha: text.includes('Alpha'), beta: text.includes('Beta') };
      };
      await expect.poll(shown).toEqual({ alpha: true, beta: false });
    });
    const view = await gw<{ filters: Array<Record<string, unknown>> }>('views/Default%20View/?table_name=Table1');
    expect(view.data.filters).toEqual([expect.objectContaining({ filter_predicate: 'greater', filter_term: 5 })]);
  });

  it('links a row to a row of another table through the link editor', async () => {
    await gw('tables/', { method: 'POST', body: { table_name: 'Clients' } });
    await gw('rows/', { method: 'POST', body: { table_name: 'Clients', rows: [{ Name: 'Acme' }, { Name: 'Globex' }] } });
    await step(page, 'link', async () => {
      await page.reload();
      await page.getByRole('link', { name: 'Clients' }).waitFor();
      await page.getByRole('button', { name: 'Columns' }).click();
      await page.getByLabel('Column name').fill('Client');
      await page.getByLabel('Column type').selectOption('link');
      await page.getByLabel('Other table name').fill('Clients');
      await page.getByRole('button', { name: 'Add column' }).click();
      await page.locator('.panel table').getByText('Client', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Columns' }).click();
      // The new column renders after the metadata refetch: scroll right until it is the last one.
      await expect
        .poll(async () => {
          await page.locator('.grid').evaluate((el) => (el.scrollLeft = el.scrollWidth));
          return page.locator('.grid [role=columnheader]').last().innerText();
        })
        .toContain('Client');
      const linkCell = page.locator('.grid [role=row][aria-rowindex="2"] [role=gridcell]').last();
      await linkCell.dblclick();
      const dialog = page.getByRole('dialog', { name: 'Linked rows of Client' });
      await dialog.getByRole('option', { name: 'Acme' }).click();
      await dialog.getByRole('button', { name: 'Save links' }).click();
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(() => linkCell.innerText()).toBe('Acme');
    });
    const rows = await gw<{ rows: Array<Record<string, unknown>> }>('rows/?table_name=Table1&convert_keys=true');
    expect(rows.data.rows.find((r) => r.Name === 'Alpha')?.Client).toEqual([expect.objectContaining({ display_value: 'Acme' })]);
  });

  it('creates an API-Token shown once, and seatable-api uses it', async () => {
    let token = '';
    await step(page, 'api-token', async () => {
      await page.getByRole('link', { name: 'Integrations' }).first().click();
      await page.getByLabel('App name').fill('script');
      await page.getByRole('button', { name: 'Create API-Token' }).click();
      token = await page.getByTestId('new-api-token').innerText();
    });
    expect(token).toMatch(/^[0-9a-f]{40}$/);
    const client = new Base({ server: url, APIToken: token });
    script = client;
    await client.auth();
    await client.appendRow('Table1', { Name: 'FromClient', Number: 9 });
    const rows = await client.listRows('Table1');
    expect(rows.map((r) => r.Name)).toContain('FromClient');
    // The list shows the token's last access, now that it was used.
    await page.reload();
    await expect.poll(() => page.getByRole('table', { name: 'API-Tokens' }).innerText()).not.toContain('never');
  });

  it('adds a webhook, shows its delivery log, and redelivers', async () => {
    await step(page, 'webhook', async () => {
      await page.getByLabel('Webhook URL').fill(receiver.url('/hook'));
      await page.getByLabel('Webhook secret (optional)').fill('s3cret');
      await page.getByRole('button', { name: 'Add webhook' }).click();
      await page.getByRole('button', { name: 'Delivery log' }).waitFor();
    });
    await gw('rows/', { method: 'POST', body: { table_name: 'Table1', rows: [{ Name: 'Hooked', Number: 1 }] } });
    await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    await step(page, 'delivery-log', async () => {
      await page.getByRole('button', { name: 'Delivery log' }).click();
      const log = page.getByLabel('Delivery log');
      await log.getByText('succeeded').first().waitFor({ timeout: 15_000 });
      const before = receiver.received.length;
      await log.getByRole('button', { name: /^Redeliver \d+$/ }).first().click();
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBeGreaterThan(before);
      await log.getByText('redelivery').first().waitFor({ timeout: 15_000 });
      await expect.poll(() => log.getByText('succeeded', { exact: true }).count(), { timeout: 15_000 }).toBe(2);
      await page.getByRole('listitem', { name: /^Webhook / }).screenshot({ path: 'docs/screenshots/webhook-delivery-log.png' });
    });
    await step(page, 'webhook-catch-up', async () => {
      const log = page.getByLabel('Delivery log');
      // A change the receiver refuses (400: failed for good, no retry) …
      receiver.replies.push({ status: 400 });
      const before = receiver.received.length;
      await gw('rows/', { method: 'POST', body: { table_name: 'Table1', rows: [{ Name: 'Refused once', Number: 2 }] } });
      await log.getByText('failed', { exact: true }).first().waitFor({ timeout: 15_000 });
      // … comes again with one click on "Redeliver failed" (since yesterday, the default).
      await log.getByRole('form', { name: 'Redeliver failed' }).getByRole('button', { name: 'Redeliver failed' }).click();
      await log.getByRole('status').filter({ hasText: 'Redeliver failed: 1 delivery queued.' }).waitFor();
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(before + 2);
      expect(JSON.parse(receiver.received.at(-1)!.body).data.row_name).toBe('Refused once');
      // Replaying the last day's changes queues every change of the base since then, behind live ones.
      const replay = log.getByRole('form', { name: 'Replay changes' });
      await replay.getByRole('button', { name: 'Replay' }).click();
      const status = log.getByRole('status').filter({ hasText: /^Replay: \d+ deliveries queued\.$/ });
      await status.waitFor();
      const queued = Number(/(\d+)/.exec(await status.innerText())![1]);
      expect(queued).toBeGreaterThanOrEqual(2);
      await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(before + 2 + queued);
      await log.getByText(/^replay/).first().waitFor({ timeout: 15_000 });
    });
    await step(page, 'webhook-subscription', async () => {
      const hook = page.getByRole('listitem', { name: /^Webhook / });
      await hook.getByRole('button', { name: 'Subscription' }).click();
      const form = page.getByRole('form', { name: 'Webhook subscription' });
      await form.getByLabel('Tables').fill('Table1');
      await form.getByLabel('insert_row').check();
      await form.getByRole('button', { name: 'Save subscription' }).click();
      await hook.getByText('filtered', { exact: true }).waitFor();
      const listed = await call<{ webhook_list: Array<{ subscription?: Record<string, unknown> }> }>(`/api/v2.1/workspace/${workspaceId}/dtable/${BASE}/webhooks/`);
      expect(listed.data.webhook_list[0]!.subscription).toMatchObject({ tables: ['0000'], events: ['insert_row'], fire_on: 'matching' });
      // Rotating keeps the old secret valid for a while; the page says until when.
      confirmations.promptText = 'rotated-secret';
      await hook.getByRole('button', { name: 'Rotate secret' }).click();
      await hook.getByText(/old secret valid until/).waitFor();
      confirmations.promptText = undefined;
    });
  });

  it('builds each rule type, and a rule’s notification arrives in the bell', async () => {
    await step(page, 'rules', async () => {
      const form = page.getByRole('form', { name: 'New rule' });
      const create = async (name: string, type: string, extra?: () => Promise<void>) => {
        await form.getByLabel('Rule name').fill(name);
        await form.getByLabel('Rule type').selectOption(type);
        await extra?.();
        const me = form.getByLabel(/\(me\)/);
        if (!(await me.isChecked())) await me.check();
        await form.getByLabel('Message').fill(`${name} fired`);
        await form.getByRole('button', { name: 'Create rule' }).click();
        await page.getByRole('list', { name: 'Rules' }).getByText(name, { exact: true }).waitFor();
      };
      await create('New rows', 'rows_added');
      await create('Edits', 'rows_modified');
      await create('Big numbers', 'filters_satisfy', async () => {
        await form.getByRole('button', { name: '+ Filter' }).click();
        await form.getByLabel('Filter 1 column').selectOption({ label: 'Number' });
        await form.getByLabel('Filter 1 predicate').selectOption('greater');
        await form.getByLabel('Filter 1 value').fill('100');
      });
      await create('Due soon', 'near_deadline', async () => {
        await form.getByLabel('Date column').selectOption('Due');
      });
    });
    const rules = await call<{ dtable_notification_rule_list: Array<{ trigger: { condition: string } }> }>(`/api/v2.1/workspace/${workspaceId}/dtable/${BASE}/notification-rules/`);
    expect(rules.data.dtable_notification_rule_list.map((r) => r.trigger.condition).sort()).toEqual(['filters_satisfy', 'near_deadline', 'rows_added', 'rows_modified']);

    // A row added by a script (an API-Token, not the admin) triggers "New rows" for the admin; the
    // bell hears of it over the real-time channel (its polling fallback is a minute when live).
    // The bell's channel connects in the background; on a loaded machine that has taken over 10 s.
    await step(page, 'bell-live', () => page.locator('a.bell[data-live="yes"]').waitFor({ timeout: 45_000 }));
    await script.appendRow('Table1', { Name: 'Notify me', Number: 9 });
    await step(page, 'bell', async () => {
      await page.getByTestId('unread-count').waitFor({ timeout: 20_000 });
      expect(frames.some((f) => f.includes('"new-notification"') && f.includes('New rows fired'))).toBe(true);
      await page.getByRole('link', { name: /Notifications, [1-9]\d* unread/ }).click();
      await page.getByText('New rows fired').first().waitFor();
      // The inbox fits a phone-sized screen without sideways scrolling.
      await page.setViewportSize({ width: 390, height: 844 });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.getByRole('button', { name: 'Mark all read' }).click();
      await page.getByRole('link', { name: 'Notifications, 0 unread' }).waitFor();
      await page.setViewportSize({ width: 1280, height: 800 });
      // The notification links to its row: the editor selects it and opens its comments.
      await page.getByRole('listitem').filter({ hasText: 'New rows fired' }).first().getByRole('link', { name: `${BASE} · row` }).click();
      await page.getByRole('complementary', { name: 'Row comments' }).getByText('Comments on “Notify me”').waitFor();
    });
  }, 90_000);

  it('shares the base read-only, then read-write, and the other user sees the permission take effect', async () => {
    const other = BOB;
    expect((await call('/api/v2.1/admin/users/', { method: 'POST', body: { email: other.email, password: other.password, name: other.name } })).status).toBeLessThan(300);
    await step(page, 'share', async () => {
      await page.goto(`${url}/#/base/${workspaceId}/${BASE}/share`);
      await page.getByLabel('User e-mail').fill(other.email);
      await page.getByLabel('Permission', { exact: true }).selectOption('r');
      await page.getByRole('button', { name: 'Share', exact: true }).click();
      await page.getByRole('table', { name: 'Shared with' }).getByText(other.email).waitFor();
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const bob = await context.newPage();
    bob.setDefaultTimeout(10_000);
    try {
      await step(bob, 'bob-read-only', async () => {
        await signIn(bob, url, other.email, other.password);
        await bob.getByRole('listitem', { name: `Base ${BASE}` }).getByText('r · from Ada Admin').waitFor();
        await bob.getByRole('link', { name: BASE, exact: true }).click();
        await bob.getByText(/^\d+ rows$/).waitFor();
        // Read-only: the editor says so and offers no edit controls.
        await bob.getByRole('note').filter({ hasText: 'Read-only' }).waitFor();
        expect(await bob.getByRole('button', { name: '+ Row' }).count()).toBe(0);
      });
      await step(page, 'share-rw', async () => {
        await page.getByLabel(`Permission of ${other.email}`).selectOption('rw');
        await expect.poll(async () => (await call<{ user_list: Array<{ permission: string }> }>(`/api/v2.1/workspace/${workspaceId}/dtable/${BASE}/share/`)).data.user_list[0]?.permission).toBe('rw');
      });
      const before = (await gw<{ rows: unknown[] }>('rows/?table_name=Table1')).data.rows.length;
      await step(bob, 'bob-read-write', async () => {
        await bob.reload();
        await bob.getByRole('button', { name: '+ Row' }).click();
        await expect.poll(async () => (await gw<{ rows: unknown[] }>('rows/?table_name=Table1')).data.rows.length).toBe(before + 1);
      });
    } finally {
      await context.close();
    }
  });

  it('shows changes by another user live in the open grid (real-time channel)', () => liveGridUpdates(run()));

  it('comments on a row: @mention, edit and delete one’s own', () => rowComments(run()));

  it('the other user copies the shared base, changes the password and is asked to sign in again when it changes elsewhere', () => copyAndPassword(run()), 60_000);

  it('admin deletes an invalid rule', () => adminDeletesInvalidRule(run()));

  it('admin makes a user admin, deactivates them, and sees every webhook’s health', () => adminUsersAndWebhooks(run()));

  it('gives every control on every page an accessible name', () => accessibleNames(run()), 60_000);

  it('asks before deleting: a dismissed confirmation deletes nothing', () => dismissedDelete(run()));
});
