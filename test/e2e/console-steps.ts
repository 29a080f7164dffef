/**
 * Steps of the console's end-to-end run that build on the shared fixtures of console.test.ts
 * (one server, one browser, the base "Projects" shared read-write with Bob): live updates, row
 * comments, copying a base, a password change, and the admin's users and webhook health.
 */
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';
import { unnamedControls } from './accessibility.js';
import { signIn, step } from './browser.js';

export const BASE = 'Projects';
export const BOB = { email: 'bob@console.test', password: 'bob-password-1', name: 'Bob' };

type Call = <T>(path: string, init?: { method?: string; body?: unknown; token?: string }) => Promise<{ status: number; data: T }>;

export interface ConsoleRun {
  url: string;
  browser: Browser;
  /** The admin's page, at 1280×800. */
  page: Page;
  call: Call;
  /** A call to the base's gateway with the admin's Base-Token. */
  gw: Call;
  workspaceId: number;
  /** Payloads of the WebSocket frames the admin's page received. */
  frames: string[];
  /** Messages of the confirmations the admin's page showed. */
  dialogs: string[];
  /** The admin's page accepts confirmations unless `dismissNext` is set (for one); a prompt gets `promptText`. */
  confirmations: { dismissNext: boolean; promptText?: string };
}

async function accountToken(url: string, email: string, password: string): Promise<{ status: number; token?: string }> {
  const res = await fetch(`${url}/api2/auth-token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: email, password }) });
  const body = (await res.json()) as { token?: string };
  return { status: res.status, token: body.token };
}

/** Bob edits the base through the API; the admin's open grid shows it without a reload. */
export async function liveGridUpdates(run: ConsoleRun): Promise<void> {
  const { page, call, url, workspaceId, frames } = run;
  const bob = (await accountToken(url, BOB.email, BOB.password)).token!;
  const access = await call<{ access_token: string; dtable_uuid: string }>(`/api/v2.1/workspace/${workspaceId}/dtable/${BASE}/access-token/`, { token: bob });
  const gw = <T>(suffix: string, init: { method?: string; body?: unknown } = {}) =>
    call<T>(`/api-gateway/api/v2/dtables/${access.data.dtable_uuid}/${suffix}`, { ...init, token: access.data.access_token });
  let loads = 0;
  page.on('load', () => (loads += 1));
  const grid = page.getByRole('grid', { name: 'Rows of Clients' });
  await step(page, 'live-grid', async () => {
    await page.goto(`${url}/#/base/${workspaceId}/${BASE}`);
    await page.getByRole('link', { name: 'Clients', exact: true }).click();
    await grid.waitFor();
    await page.getByRole('status', { name: 'Live updates: live' }).waitFor();
    await expect.poll(() => grid.innerText()).toContain('Globex');
    loads = 0;
    const rows = (await gw<{ rows: Array<{ _id: string; Name: string }> }>('rows/?table_name=Clients&convert_keys=true')).data.rows;
    const id = (name: string) => rows.find((r) => r.Name === name)!._id;
    expect((await gw('rows/', { method: 'PUT', body: { table_name: 'Clients', updates: [{ row_id: id('Acme'), row: { Name: 'Acme live' } }] } })).status).toBe(200);
    await expect.poll(() => grid.innerText(), { timeout: 10_000 }).toContain('Acme live');
    expect((await gw('rows/', { method: 'POST', body: { table_name: 'Clients', rows: [{ Name: 'Initech' }] } })).status).toBe(200);
    await expect.poll(() => grid.innerText(), { timeout: 10_000 }).toContain('Initech');
    expect((await gw('rows/', { method: 'DELETE', body: { table_name: 'Clients', row_ids: [id('Globex')] } })).status).toBe(200);
    await expect.poll(() => grid.innerText(), { timeout: 10_000 }).not.toContain('Globex');
  });
  expect(loads).toBe(0);
  expect(frames.some((f) => f.includes('"update-dtable"') && f.includes('Acme live'))).toBe(true);
}

/** Comments on a row: add one that @mentions Bob (who is notified), edit it, delete it. */
export async function rowComments(run: ConsoleRun): Promise<void> {
  const { page, call, url } = run;
  const panel = page.getByRole('complementary', { name: 'Row comments' });
  await step(page, 'comments', async () => {
    const grid = page.getByRole('grid', { name: 'Rows of Clients' });
    const row = grid.locator('[role=row]').filter({ hasText: 'Acme live' });
    // The grid's checkbox input is visually hidden behind its styled box.
    await row.getByRole('checkbox', { name: 'Select' }).dispatchEvent('click');
    await expect.poll(() => row.getByRole('checkbox', { name: 'Select' }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Comments' }).click();
    await panel.getByText('No comments on this row yet.').waitFor();
    await panel.getByLabel('Comment', { exact: true }).fill('Please check');
    await panel.getByLabel('Mention someone').selectOption({ label: BOB.name });
    expect(await panel.getByLabel('Comment', { exact: true }).inputValue()).toBe(`Please check @${BOB.email} `);
    await panel.getByRole('button', { name: 'Add comment' }).click();
    const item = panel.getByRole('listitem', { name: 'Comment by Ada Admin' });
    await item.getByText(`Please check @${BOB.email}`).waitFor();
    await item.getByRole('button', { name: 'Edit' }).click();
    await item.getByLabel('Edited comment').fill('Checked, thanks');
    await item.getByRole('button', { name: 'Save comment' }).click();
    await item.getByText('Checked, thanks').waitFor();
    await item.getByText(/\(edited\)/).waitFor();
  });
  // Bob got the mention in his inbox.
  const bob = (await accountToken(url, BOB.email, BOB.password)).token!;
  const inbox = await call<{ notification_list: Array<{ msg_type: string; detail: { comment?: string } }> }>('/api/v2.1/notifications/', { token: bob });
  expect(inbox.data.notification_list.find((n) => n.msg_type === 'comment')?.detail.comment).toBe(`Please check @${BOB.email} `);
  await step(page, 'comment-delete', async () => {
    await panel.getByRole('listitem', { name: 'Comment by Ada Admin' }).getByRole('button', { name: 'Delete' }).click();
    await panel.getByText('No comments on this row yet.').waitFor();
  });
}

/** Bob copies the shared base into his workspace, then changes his password and keeps working. */
export async function copyAndPassword(run: ConsoleRun): Promise<void> {
  const { browser, url, call } = run;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const bob = await context.newPage();
  bob.setDefaultTimeout(10_000);
  bob.on('dialog', (d) => void d.accept());
  try {
    await step(bob, 'copy-base', async () => {
      await signIn(bob, url, BOB.email, BOB.password);
      const shared = bob.getByRole('listitem', { name: `Base ${BASE}` });
      await shared.getByRole('button', { name: 'Copy' }).click();
      await shared.getByRole('button', { name: 'Copy base' }).click();
      await bob.locator('.workspace').getByRole('link', { name: BASE, exact: true }).waitFor();
    });
    const before = (await accountToken(url, BOB.email, BOB.password)).token!;
    const list = await call<{ workspace_list: Array<{ table_list?: Array<{ name: string; workspace_id: number }> }> }>('/api/v2.1/workspaces/', { token: before });
    const copy = list.data.workspace_list.flatMap((w) => w.table_list ?? []).find((b) => b.name === BASE)!;
    expect(copy.workspace_id).not.toBe(run.workspaceId);
    const copyAccess = await call<{ access_token: string; dtable_uuid: string }>(`/api/v2.1/workspace/${copy.workspace_id}/dtable/${BASE}/access-token/`, { token: before });
    const copied = await call<{ rows: Array<{ Name: string }> }>(`/api-gateway/api/v2/dtables/${copyAccess.data.dtable_uuid}/rows/?table_name=Clients&convert_keys=true`, { token: copyAccess.data.access_token });
    expect(copied.data.rows.map((r) => r.Name).sort()).toEqual(['Acme live', 'Initech']);

    const second = 'bob-password-2';
    await step(bob, 'password', async () => {
      await bob.getByRole('link', { name: 'Settings' }).click();
      const form = bob.getByRole('form', { name: 'Change password' });
      await form.getByLabel('Current password').fill('wrong-password');
      await form.getByLabel('New password', { exact: true }).fill(second);
      await form.getByLabel('Repeat new password').fill(second);
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByRole('alert').filter({ hasText: 'Old password is wrong.' }).waitFor();
      await form.getByLabel('Current password').fill(BOB.password);
      await form.getByRole('button', { name: 'Change password' }).click();
      await form.getByRole('status').filter({ hasText: 'Password changed.' }).waitFor();
      // Still signed in, with the new token: the bases load.
      await bob.getByRole('link', { name: 'Bases', exact: true }).click();
      await bob.locator('.workspace').getByRole('link', { name: BASE, exact: true }).waitFor();
    });
    expect((await call('/api/v2.1/user/', { token: before })).status).toBe(401);
    expect((await accountToken(url, BOB.email, BOB.password)).status).toBe(400);
    const current = (await accountToken(url, BOB.email, second)).token!;
    expect(current).not.toBe(before);

    // The password changes elsewhere: the open console asks to sign in again at its next request
    // with the Account-Token (here: the sharing page of Bob's copy).
    const third = 'bob-password-3';
    expect((await call('/api/v2.1/user/password/', { method: 'PUT', body: { old_password: second, new_password: third }, token: current })).status).toBe(200);
    await step(bob, 'session-ended', async () => {
      await bob.goto(`${url}/#/base/${copy.workspace_id}/${BASE}/share`);
      await bob.getByRole('status').filter({ hasText: 'Your session has ended' }).waitFor();
      await signIn(bob, url, BOB.email, third);
    });
    BOB.password = third;
  } finally {
    await context.close();
  }
}

/** The admin makes Bob an admin, deactivates him, and sees every webhook's health. */
export async function adminUsersAndWebhooks(run: ConsoleRun): Promise<void> {
  const { page, call, url } = run;
  const users = page.getByRole('table', { name: 'Users' });
  const bobRow = users.getByRole('row').filter({ hasText: BOB.email });
  await step(page, 'admin-users', async () => {
    await page.goto(`${url}/#/admin`);
    await bobRow.getByRole('button', { name: `Make admin ${BOB.email}` }).click();
    await bobRow.getByRole('button', { name: `Remove admin ${BOB.email}` }).waitFor();
    await bobRow.getByRole('button', { name: `Deactivate ${BOB.email}` }).click();
    await bobRow.getByText('deactivated').waitFor();
  });
  const listed = await call<{ data: Array<{ contact_email: string; is_staff: boolean; is_active: boolean }> }>('/api/v2.1/admin/users/');
  expect(listed.data.data.find((u) => u.contact_email === BOB.email)).toMatchObject({ is_staff: true, is_active: false });
  expect((await accountToken(url, BOB.email, BOB.password)).token).toBeUndefined();
  await step(page, 'webhook-health', async () => {
    const health = page.getByRole('table', { name: 'Webhook health' });
    const hook = health.getByRole('row', { name: /^Webhook http:\/\/127\.0\.0\.1:\d+\/hook$/ });
    await hook.getByText('enabled').waitFor();
    await hook.getByText('succeeded').waitFor();
    expect(await hook.locator('td').first().innerText()).toBe(BASE);
  });
}

/** Every control on every page (and the editor's panels) has an accessible name. */
export async function accessibleNames(run: ConsoleRun): Promise<void> {
  const { page, url, workspaceId } = run;
  const pages: Array<[string, () => Promise<void>]> = [
    ['bases', () => page.getByRole('heading', { name: 'Bases', exact: true }).waitFor()],
    [`base/${workspaceId}/${BASE}`, async () => {
      await page.getByRole('grid').waitFor();
      await page.getByRole('button', { name: /Filter & sort/ }).click();
      await page.getByRole('button', { name: 'Columns' }).click();
      await page.getByRole('form', { name: 'Add column' }).waitFor();
    }],
    [`base/${workspaceId}/${BASE}/integrations`, () => page.getByRole('button', { name: 'Create API-Token' }).waitFor()],
    [`base/${workspaceId}/${BASE}/share`, () => page.getByRole('table', { name: 'Shared with' }).waitFor()],
    ['settings', () => page.getByRole('form', { name: 'Change password' }).waitFor()],
    ['inbox', () => page.getByRole('heading', { name: 'Notifications' }).waitFor()],
    ['admin', () => page.getByRole('table', { name: 'Webhook health' }).waitFor()],
  ];
  for (const [route, ready] of pages) {
    await step(page, `names-${route}`, async () => {
      await page.goto(`${url}/#/${route}`);
      await ready();
      expect({ route, unnamed: await unnamedControls(page) }).toEqual({ route, unnamed: [] });
    });
  }
}

/** Delete asks first; answering "Cancel" leaves the base in place. */
export async function dismissedDelete(run: ConsoleRun): Promise<void> {
  const { page, url, call, dialogs, confirmations } = run;
  await step(page, 'dismissed-delete', async () => {
    await page.goto(`${url}/#/`);
    const card = page.getByRole('listitem', { name: `Base ${BASE}` });
    const asked = dialogs.length;
    confirmations.dismissNext = true;
    await card.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => dialogs.length).toBe(asked + 1);
    expect(dialogs[asked]).toBe(`Delete the base “${BASE}” and all its rows?`);
    await card.getByRole('link', { name: BASE, exact: true }).waitFor();
  });
  const list = await call<{ workspace_list: Array<{ table_list?: Array<{ name: string }> }> }>('/api/v2.1/workspaces/');
  expect(list.data.workspace_list.flatMap((w) => w.table_list ?? []).map((b) => b.name)).toContain(BASE);
}

/** A rule whose table is deleted becomes invalid; the admin deletes it from the admin page. */
export async function adminDeletesInvalidRule(run: ConsoleRun): Promise<void> {
  const { page, url, call, gw, workspaceId } = run;
  await gw('tables/', { method: 'POST', body: { table_name: 'Scratch' } });
  const meta = await gw<{ metadata: { tables: Array<{ _id: string; name: string; views: Array<{ _id: string }> }> } }>('metadata/');
  const scratch = meta.data.metadata.tables.find((t) => t.name === 'Scratch')!;
  const me = (await call<{ email: string }>('/api/v2.1/user/')).data.email;
  const created = await call<{ id: number }>(`/api/v2.1/workspace/${workspaceId}/dtable/${BASE}/notification-rules/`, {
    method: 'POST',
    body: { run_condition: 'per_update', trigger: { rule_name: 'Orphan', table_id: scratch._id, view_id: scratch.views[0]!._id, condition: 'rows_added' }, action: { type: 'notify', users: [me], default_msg: 'x' } },
  });
  expect(created).toMatchObject({ status: 200 });
  await gw('tables/', { method: 'DELETE', body: { table_name: 'Scratch' } });
  const invalidCount = async () => (await call<{ count: number }>('/api/v2.1/admin/invalid-notification-rules/')).data.count;
  await expect.poll(invalidCount, { timeout: 15_000 }).toBe(1);
  await step(page, 'admin', async () => {
    await page.goto(`${url}/#/admin`);
    const invalid = page.getByRole('list', { name: 'Invalid rules' });
    await invalid.getByText('Orphan').waitFor();
    await invalid.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Invalid rules (0)' }).waitFor();
  });
  expect(await invalidCount()).toBe(0);
  const all = await call<{ notification_rule_list: Array<{ trigger: { rule_name: string } }> }>('/api/v2.1/admin/notification-rules/');
  expect(all.data.notification_rule_list.map((r) => r.trigger.rule_name)).not.toContain('Orphan');
}
