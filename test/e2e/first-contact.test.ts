import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSuite, ADMIN, signIn, step, newConsolePage } from './browser.js';
import { invisibleFocus, seriousAxeViolations, unnamedControls } from './accessibility.js';

const BASE = 'First contact';
const BOB = { email: 'bob@first.test', password: 'bob-password-1', name: 'Bob Builder' };
const CAROL = { email: 'carol@first.test', password: 'carol-password-1', name: 'Carol Reader' };

/**
 * What a new user meets first (issue #29 item 1, #24 item 8), in headless Chromium against a real
 * server: the external link's page without an account, a grid that fills the window, collaborators
 * picked from the base's users, a read-only share without edit controls, dates in the column's
 * format, and only http/https/mailto values rendered as links.
 */
describe('console: first contact (headless Chromium)', () => {
  const ids: Record<string, string> = {};

  const s = new ConsoleSuite(BASE);
  const { call, gw } = s;
  const grid = (p: Page) => p.getByRole('grid', { name: 'Rows of Table1' });
  const cellOf = (p: Page, rowName: string, column: string) =>
    p.locator('.grid [role=row]').filter({ hasText: rowName }).locator(`[role=gridcell][aria-colindex="${columnIndex[column]}"]`);
  const columnIndex: Record<string, number> = {};

  beforeAll(async () => {
    await s.start();
    for (const user of [BOB, CAROL]) expect((await call('/api/v2.1/admin/users/', { method: 'POST', body: user })).status).toBeLessThan(300);
    await s.createBase();
    for (const [email, permission] of [[BOB.email, 'rw'], [CAROL.email, 'r']]) {
      expect((await call(`/api/v2.1/workspace/${s.workspaceId}/dtable/${encodeURIComponent(BASE)}/share/`, { method: 'POST', body: { email, permission } })).status).toBeLessThan(300);
    }
    const columns: Array<[string, string, Record<string, unknown>?]> = [
      ['Due', 'date', { format: 'DD.MM.YYYY' }],
      ['Meeting', 'date', { format: 'M/D/YYYY HH:mm' }],
      ['Site', 'url'],
      ['Owner', 'collaborator'],
    ];
    for (const [name, type, data] of columns) {
      const added = await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: name, column_type: type, ...(data ? { column_data: data } : {}) } });
      expect(added.status).toBe(200);
    }
    const blank = await gw<{ rows: Array<{ _id: string }> }>('rows/?table_name=Table1');
    await gw('rows/', { method: 'DELETE', body: { table_name: 'Table1', row_ids: blank.data.rows.map((r) => r._id) } });
    const rows = [
      { Name: 'Safe', Due: '2026-12-31', Meeting: '2026-03-04 09:30', Site: 'https://example.com/safe' },
      { Name: 'Evil', Site: 'javascript:alert(document.domain)' },
      { Name: 'Mailto', Site: 'mailto:someone@example.com' },
    ];
    expect((await gw('rows/', { method: 'POST', body: { table_name: 'Table1', rows } })).status).toBe(200);
    const meta = await gw<{ metadata: { tables: Array<{ columns: Array<{ name: string }> }> } }>('metadata/');
    // Column 1 is the row selection; the table's columns follow in order.
    meta.data.metadata.tables[0]!.columns.forEach((c, i) => (columnIndex[c.name] = i + 2));
    const users = await gw<{ user_list: Array<{ email: string; contact_email: string }> }>('related-users/');
    for (const u of users.data.user_list) ids[u.contact_email] = u.email;
  }, 90_000);

  afterAll(() => s.close());

  it('the grid fills the window on a 1080-px screen and on a phone', async () => {
    s.page = await newConsolePage(s.browser, { viewport: { width: 1920, height: 1080 } });
    await step(s.page, 'grid-height', async () => {
      await signIn(s.page, s.url, ADMIN.email, ADMIN.password);
      await s.page.goto(s.baseUrl);
      await grid(s.page).waitFor();
      const box = (await grid(s.page).boundingBox())!;
      // It reaches the bottom of the window (a few pixels of padding), far beyond the library's 350 px.
      expect(box.y + box.height).toBeGreaterThan(1080 - 24);
      expect(box.y + box.height).toBeLessThanOrEqual(1080);
      expect(await s.page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(1080);
      await s.page.setViewportSize({ width: 390, height: 844 });
      await expect.poll(async () => {
        const b = (await grid(s.page).boundingBox())!;
        return b.y + b.height;
      }).toBeGreaterThan(844 - 24);
      expect(await s.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await s.page.setViewportSize({ width: 1920, height: 1080 });
    });
  });

  it('shows dates in the column’s format and only http, https and mailto values as links', async () => {
    await step(s.page, 'dates-links', async () => {
      await expect.poll(() => cellOf(s.page, 'Safe', 'Due').innerText()).toBe('31.12.2026');
      expect(await cellOf(s.page, 'Safe', 'Meeting').innerText()).toBe('3/4/2026 09:30');
      expect(await cellOf(s.page, 'Safe', 'Site').locator('a').getAttribute('href')).toBe('https://example.com/safe');
      expect(await cellOf(s.page, 'Mailto', 'Site').locator('a').getAttribute('href')).toBe('mailto:someone@example.com');
      // The javascript: value is shown, as text, with no link to click.
      expect(await cellOf(s.page, 'Evil', 'Site').innerText()).toBe('javascript:alert(document.domain)');
      expect(await cellOf(s.page, 'Evil', 'Site').locator('a').count()).toBe(0);
      expect(await s.page.locator('a[href^="javascript:"]').count()).toBe(0);
    });
  });

  it('picks a collaborator from the base’s users with the keyboard alone, and shows names', async () => {
    await step(s.page, 'collaborator', async () => {
      await cellOf(s.page, 'Safe', 'Name').click();
      for (let i = columnIndex.Name!; i < columnIndex.Owner!; i++) await s.page.keyboard.press('ArrowRight');
      await s.page.keyboard.press('Enter');
      const dialog = s.page.getByRole('dialog', { name: 'Choose Owner' });
      await dialog.waitFor();
      // Free text is no choice: a typed e-mail that is no user of the base matches nothing.
      await s.page.keyboard.type('nobody@nowhere.test');
      await dialog.getByText('No user of this base matches.').waitFor();
      await s.page.keyboard.press('Control+A');
      await s.page.keyboard.type('bob');
      await expect.poll(() => dialog.getByRole('option').count()).toBe(1);
      await dialog.getByRole('option', { name: /Bob Builder/ }).waitFor();
      await s.page.keyboard.press('Enter');
      await expect.poll(() => dialog.getByRole('option', { name: /Bob Builder/ }).getAttribute('aria-selected')).toBe('true');
      await s.page.keyboard.press('Control+Enter');
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(() => cellOf(s.page, 'Safe', 'Owner').innerText()).toContain('Bob Builder');
      expect(await cellOf(s.page, 'Safe', 'Owner').innerText()).not.toContain('@auth.local');
    });
    await expect
      .poll(async () => (await gw<{ rows: Array<Record<string, unknown>> }>('rows/?table_name=Table1&convert_keys=true')).data.rows.find((r) => r.Name === 'Safe')?.Owner)
      .toEqual([ids[BOB.email]]);
    mkdirSync('docs/screenshots', { recursive: true });
    await s.page.screenshot({ path: 'docs/screenshots/grid-full-height.png' });
  });

  it('a read-only user sees no edit controls, and a read-write user does', async () => {
    const context = await s.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const carol = await context.newPage();
    carol.setDefaultTimeout(10_000);
    try {
      await step(carol, 'read-only-share', async () => {
        await signIn(carol, s.url, CAROL.email, CAROL.password);
        await carol.getByRole('link', { name: BASE, exact: true }).click();
        await grid(carol).waitFor();
        await carol.getByRole('note').filter({ hasText: 'Read-only' }).waitFor();
        for (const name of ['+ Row', 'Columns', '+ Table', /^Delete \d+ row/, /^Filter & sort/]) {
          expect(await carol.getByRole('button', { name }).count()).toBe(0);
        }
        // Double-click and Enter open no editor (the only inputs are the row-selection checkboxes).
        await cellOf(carol, 'Safe', 'Name').dblclick();
        await carol.keyboard.press('Enter');
        expect(await carol.locator('.grid input:not([type=checkbox]), .grid textarea, .grid select').count()).toBe(0);
        expect(await carol.getByRole('dialog').count()).toBe(0);
        await expect.poll(() => cellOf(carol, 'Safe', 'Owner').innerText()).toContain('Bob Builder');
        await carol.screenshot({ path: 'docs/screenshots/read-only-share.png' });
      });
      await step(carol, 'read-write-share', async () => {
        await carol.getByRole('button', { name: 'Sign out' }).click();
        await signIn(carol, s.url, BOB.email, BOB.password);
        await carol.getByRole('link', { name: BASE, exact: true }).click();
        await grid(carol).waitFor();
        await carol.getByRole('button', { name: '+ Row' }).waitFor();
        expect(await carol.getByRole('note').filter({ hasText: 'Read-only' }).count()).toBe(0);
      });
    } finally {
      await context.close();
    }
  });

  it('an external link opens the base read-only without an account: password prompt, expiry, deletion', async () => {
    const links = `/api/v2.1/workspace/${s.workspaceId}/dtable/${encodeURIComponent(BASE)}/external-links/`;
    const open = await call<{ url: string; token: string }>(links, { method: 'POST', body: {} });
    const locked = await call<{ url: string; token: string }>(links, { method: 'POST', body: { password: 'link-password-1' } });
    const custom = await call<{ url: string; token: string }>(links, { method: 'POST', body: { token: 'team-board' } });
    expect(open.data.url).toBe(`${s.url}/dtable/external-links/${open.data.token}/`);
    expect(custom.data.url).toBe(`${s.url}/dtable/external-links/custom/team-board/`);
    // The link itself answers with the console (not a JSON 404).
    const html = await fetch(open.data.url);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toContain('text/html');
    expect(html.headers.get('content-security-policy')).toContain("script-src 'self'");

    const context = await s.browser.newContext({ viewport: { width: 1280, height: 800 } });
    const guest = await context.newPage();
    guest.setDefaultTimeout(10_000);
    try {
      await step(guest, 'external-link', async () => {
        for (const link of [open.data.url, custom.data.url]) {
          await guest.goto(link);
          await grid(guest).waitFor();
          await guest.getByRole('heading', { name: BASE }).waitFor();
          await expect.poll(() => grid(guest).innerText()).toContain('Safe');
          await guest.getByRole('note').filter({ hasText: 'Read-only' }).waitFor();
          expect(await guest.getByRole('button', { name: '+ Row' }).count()).toBe(0);
          expect(await guest.getByRole('button', { name: 'Comments' }).count()).toBe(0);
          expect(await guest.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
          expect(await guest.evaluate(() => sessionStorage.length)).toBe(0);
        }
        expect(await seriousAxeViolations(guest)).toEqual([]);
        await guest.screenshot({ path: 'docs/screenshots/external-link.png' });
      });
      await step(guest, 'external-link-password', async () => {
        await guest.goto(locked.data.url);
        const form = guest.getByRole('form', { name: 'Link password' });
        await form.waitFor();
        expect(await seriousAxeViolations(guest)).toEqual([]);
        await form.getByLabel('Password').fill('wrong-password');
        await form.getByRole('button', { name: 'Open' }).click();
        await guest.getByRole('alert').filter({ hasText: 'Password is incorrect.' }).waitFor();
        expect(await grid(guest).count()).toBe(0);
        await form.getByLabel('Password').fill('link-password-1');
        await form.getByRole('button', { name: 'Open' }).click();
        await expect.poll(() => grid(guest).innerText()).toContain('Safe');
      });
      // Expired (the link's expiry moved into the past) and deleted links show the same notice.
      await s.server.container.db.updateTable('external_links').set({ expire_at: Date.now() - 1000 }).where('is_custom', '=', 1).execute();
      const del = await call(`${links}${open.data.token}/`, { method: 'DELETE' });
      expect(del.status).toBe(200);
      await step(guest, 'external-link-gone', async () => {
        for (const link of [custom.data.url, open.data.url]) {
          await guest.goto('about:blank');
          await guest.goto(link);
          await guest.getByRole('heading', { name: 'Link not available' }).waitFor();
          expect(await grid(guest).count()).toBe(0);
        }
      });
    } finally {
      await context.close();
    }
  });

  it('at 390×844 every page fits without sideways scrolling; axe finds nothing serious and the focus is visible, in light and dark mode', async () => {
    const base = `#/base/${s.workspaceId}/${encodeURIComponent(BASE)}`;
    const pages: Array<[string, string]> = [
      ['bases', '#/'],
      ['editor', base],
      ['share', `${base}/share`],
      ['integrations', `${base}/integrations`],
      ['admin', '#/admin'],
      ['settings', '#/settings'],
      ['inbox', '#/inbox'],
    ];
    for (const scheme of ['light', 'dark'] as const) {
      const context = await s.browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: scheme });
      const phone = await context.newPage();
      phone.setDefaultTimeout(10_000);
      try {
        await step(phone, `narrow-${scheme}`, async () => {
          // The sign-in page, before signing in.
          await phone.goto(s.url);
          await phone.getByRole('button', { name: 'Sign in' }).waitFor();
          expect({ name: 'sign-in', width: await phone.evaluate(() => document.documentElement.scrollWidth) }).toEqual({ name: 'sign-in', width: 390 });
          expect({ name: 'sign-in', scheme, violations: await seriousAxeViolations(phone) }).toEqual({ name: 'sign-in', scheme, violations: [] });
          expect({ name: 'sign-in', scheme, invisibleFocus: await invisibleFocus(phone, 8) }).toEqual({ name: 'sign-in', scheme, invisibleFocus: [] });
          await signIn(phone, s.url, ADMIN.email, ADMIN.password);
          for (const [name, hash] of pages) {
            await phone.goto(`${s.url}/${hash}`);
            await phone.getByRole('heading', { level: 1 }).first().waitFor();
            await phone.locator('[role=status]:has-text("…")').first().waitFor({ state: 'detached' }).catch(() => undefined);
            expect({ name, width: await phone.evaluate(() => document.documentElement.scrollWidth) }).toEqual({ name, width: 390 });
            expect({ name, scheme, violations: await seriousAxeViolations(phone) }).toEqual({ name, scheme, violations: [] });
            expect({ name, unnamed: await unnamedControls(phone) }).toEqual({ name, unnamed: [] });
            if (scheme === 'light' && ['editor', 'integrations', 'admin'].includes(name)) await phone.screenshot({ path: `docs/screenshots/phone-${name}.png` });
            // The keyboard focus is visible on every control it reaches.
            expect({ name, scheme, invisibleFocus: await invisibleFocus(phone) }).toEqual({ name, scheme, invisibleFocus: [] });
          }
          if (scheme === 'dark') {
            await phone.goto(`${s.url}/${base}`);
            await grid(phone).waitFor();
            expect(await phone.evaluate(() => getComputedStyle(document.body).backgroundColor)).not.toBe('rgb(246, 247, 249)');
            await phone.screenshot({ path: 'docs/screenshots/dark-mode-editor.png' });
          }
        });
      } finally {
        await context.close();
      }
    }
  }, 120_000);

  it('grid tools: search highlights matches, hidden columns are saved in the view, Ctrl+Z / Ctrl+Shift+Z undo and redo edits', async () => {
    s.page = await newConsolePage(s.browser, { viewport: { width: 1280, height: 800 } });
    const rowsNow = async () => (await gw<{ rows: Array<Record<string, unknown>> }>('rows/?table_name=Table1&convert_keys=true')).data.rows;
    await step(s.page, 'search', async () => {
      await signIn(s.page, s.url, ADMIN.email, ADMIN.password);
      await s.page.goto(s.baseUrl);
      await grid(s.page).waitFor();
      const search = s.page.getByRole('searchbox', { name: 'Search in table' });
      await search.fill('example.com');
      // Two cells (the https and the mailto URL) contain it; they are marked, no other cell is.
      await s.page.getByRole('status', { name: 'Search matches' }).filter({ hasText: '0 of 2' }).waitFor();
      await expect.poll(() => s.page.locator('.grid .rdg-cell.match').count()).toBe(2);
      await search.press('Enter');
      await s.page.getByRole('status', { name: 'Search matches' }).filter({ hasText: '1 of 2' }).waitFor();
      expect(await cellOf(s.page, 'Safe', 'Site').getAttribute('aria-selected')).toBe('true');
      await search.press('Enter');
      await expect.poll(() => cellOf(s.page, 'Mailto', 'Site').getAttribute('aria-selected')).toBe('true');
      await search.fill('no such text');
      await s.page.getByRole('status', { name: 'Search matches' }).filter({ hasText: 'No match' }).waitFor();
      expect(await s.page.locator('.grid .rdg-cell.match').count()).toBe(0);
      await search.fill('');
    });
    await step(s.page, 'hide-columns', async () => {
      await s.page.getByRole('button', { name: 'Hide fields' }).click();
      await s.page.getByRole('group', { name: 'Shown fields' }).getByLabel('Meeting').uncheck();
      await s.page.getByRole('button', { name: 'Hide fields (1)' }).waitFor();
      await expect.poll(() => s.page.locator('.grid [role=columnheader]').allInnerTexts()).not.toContain('Meeting');
    });
    const view = await gw<{ hidden_columns: string[] }>('views/Default%20View/?table_name=Table1');
    const meta = await gw<{ metadata: { tables: Array<{ columns: Array<{ name: string; key: string }> }> } }>('metadata/');
    expect(view.data.hidden_columns).toEqual([meta.data.metadata.tables[0]!.columns.find((c) => c.name === 'Meeting')!.key]);
    await step(s.page, 'undo-redo', async () => {
      await s.page.getByRole('button', { name: 'Hide fields (1)' }).click();
      const type = async (rowName: string, text: string) => {
        const editor = s.page.locator('.grid input.rdg-text-editor');
        // Open the editor with the keyboard (select, Enter) once the previous write is stored and the grid
        // has no reload in flight. The grid still closes an open editor when a late reload replaces its
        // row (a known console bug, see docs/console.md): then the edit is made again, and the undo
        // steps below hold only if exactly one edit per call was recorded.
        for (let attempt = 1; ; attempt++) {
          await expect.poll(async () => (await rowsNow()).map((r) => r.Name)).toContain(rowName);
          await expect.poll(() => grid(s.page).innerText()).toContain(rowName);
          await s.page.getByRole('status').filter({ hasText: /^\d+\+? rows$/ }).waitFor();
          try {
            await cellOf(s.page, rowName, 'Name').click();
            await s.page.keyboard.press('Enter');
            await editor.fill(text, { timeout: 3_000 });
            await editor.press('Enter', { timeout: 3_000 });
            await editor.waitFor({ state: 'detached' });
            return;
          } catch (error) {
            if (attempt >= 3) throw error;
            await s.page.keyboard.press('Escape');
            // The closing editor may have saved the text after all: then this edit is done.
            if ((await rowsNow()).some((r) => r.Name === text)) return;
          }
        }
      };
      await type('Evil', 'Evil one');
      await type('Mailto', 'Mailto one');
      await type('Evil one', 'Evil two');
      await expect.poll(async () => (await rowsNow()).map((r) => r.Name).sort()).toEqual(['Evil two', 'Mailto one', 'Safe']);
      // Three steps back, across two rows, with the keyboard on the grid.
      await cellOf(s.page, 'Safe', 'Name').click();
      await s.page.keyboard.press('Control+z');
      await expect.poll(async () => (await rowsNow()).map((r) => r.Name).sort()).toEqual(['Evil one', 'Mailto one', 'Safe']);
      // The undo is a restore of the edit's logged operation (restore-operations/), not a new edit.
      type Op = { op_id: number; reverts: number | null; operation: string };
      const newest = async () => (await gw<{ operations: Op[] }>('operations/?per_page=2')).data.operations;
      await expect.poll(async () => (await newest())[0]!.reverts).toBe((await newest())[1]!.op_id);
      await s.page.keyboard.press('Control+z');
      await expect.poll(async () => (await rowsNow()).map((r) => r.Name).sort()).toEqual(['Evil one', 'Mailto', 'Safe']);
      await s.page.keyboard.press('Control+z');
      await expect.poll(async () => (await rowsNow()).map((r) => r.Name).sort()).toEqual(['Evil', 'Mailto', 'Safe']);
      await expect.poll(() => s.page.getByRole('button', { name: 'Undo' }).isDisabled()).toBe(true);
      await s.page.keyboard.press('Control+Shift+Z');
      await expect.poll(async () => (await rowsNow()).map((r) => r.Name).sort()).toEqual(['Evil one', 'Mailto', 'Safe']);
      // The redo restores the undo's operation.
      const [redo] = await newest();
      const undone = (await gw<{ operations: Op[] }>('operations/?per_page=20')).data.operations.find((o) => o.op_id === redo!.reverts);
      expect(undone?.reverts).toEqual(expect.any(Number));
      await expect.poll(() => grid(s.page).innerText()).toContain('Evil one');
      await s.page.getByRole('button', { name: 'Undo' }).click();
      await expect.poll(async () => (await rowsNow()).map((r) => r.Name).sort()).toEqual(['Evil', 'Mailto', 'Safe']);
    });
    await step(s.page, 'undo-redo-rows', async () => {
      // Added and deleted rows are undo steps too, mixed with a cell edit: redo the edit, add a row, delete one.
      const names = async () => (await rowsNow()).map((r) => (r.Name as string | undefined) ?? '').sort();
      const shown = () => s.page.locator('.grid [role=row]:not(.rdg-header-row)').count();
      await cellOf(s.page, 'Safe', 'Name').click();
      await s.page.keyboard.press('Control+Shift+Z');
      await expect.poll(names).toEqual(['Evil one', 'Mailto', 'Safe']);
      const before = new Set((await rowsNow()).map((r) => r._id));
      await s.page.getByRole('button', { name: '+ Row' }).click();
      await expect.poll(names).toEqual(['', 'Evil one', 'Mailto', 'Safe']);
      const added = (await rowsNow()).find((r) => !before.has(r._id))!._id as string;
      await expect.poll(shown).toBe(4);
      const mailtoId = (await rowsNow()).find((r) => r.Name === 'Mailto')!._id as string;
      s.page.once('dialog', (d) => void d.accept());
      await s.page.locator('.grid [role=row]').filter({ hasText: 'Mailto' }).getByRole('checkbox').check();
      await s.page.getByRole('button', { name: 'Delete 1 row(s)' }).click();
      await expect.poll(names).toEqual(['', 'Evil one', 'Safe']);
      await expect.poll(shown).toBe(3);
      const ids = async () => (await rowsNow()).map((r) => r._id as string).sort();
      await cellOf(s.page, 'Safe', 'Name').click();
      // Three steps back: the deleted row returns under its id, the added row goes, the edit is undone.
      await s.page.keyboard.press('Control+z');
      await expect.poll(names).toEqual(['', 'Evil one', 'Mailto', 'Safe']);
      expect(await ids()).toContain(mailtoId);
      await expect.poll(() => grid(s.page).innerText()).toContain('Mailto');
      await s.page.keyboard.press('Control+z');
      await expect.poll(names).toEqual(['Evil one', 'Mailto', 'Safe']);
      expect(await ids()).not.toContain(added);
      await expect.poll(shown).toBe(3);
      await s.page.keyboard.press('Control+z');
      await expect.poll(names).toEqual(['Evil', 'Mailto', 'Safe']);
      await expect.poll(() => grid(s.page).innerText()).toContain('Evil');
      // And forward again: the edit, the added row (same id), the deletion.
      await s.page.keyboard.press('Control+Shift+Z');
      await expect.poll(names).toEqual(['Evil one', 'Mailto', 'Safe']);
      await s.page.keyboard.press('Control+Shift+Z');
      await expect.poll(names).toEqual(['', 'Evil one', 'Mailto', 'Safe']);
      expect(await ids()).toContain(added);
      await expect.poll(shown).toBe(4);
      await s.page.keyboard.press('Control+Shift+Z');
      await expect.poll(names).toEqual(['', 'Evil one', 'Safe']);
      await expect.poll(() => grid(s.page).innerText()).not.toContain('Mailto');
      await expect.poll(() => s.page.getByRole('button', { name: 'Redo' }).isDisabled()).toBe(true);
      // Back to the three rows the next cases expect.
      for (const expected of [['', 'Evil one', 'Mailto', 'Safe'], ['Evil one', 'Mailto', 'Safe'], ['Evil', 'Mailto', 'Safe']]) {
        await s.page.keyboard.press('Control+z');
        await expect.poll(names).toEqual(expected);
      }
      await expect.poll(shown).toBe(3);
    });
  }, 90_000);

  it('the expanded row shows every field (hidden ones too) with its editor, and saves with the keyboard', async () => {
    await step(s.page, 'row-form', async () => {
      await s.page.locator('.grid [role=row]').filter({ hasText: 'Safe' }).getByRole('checkbox').check();
      await s.page.getByRole('button', { name: 'Expand row' }).click();
      const form = s.page.getByRole('dialog', { name: 'Row “Safe”' });
      await form.waitFor();
      // Meeting is hidden in the view, yet the form shows it, in a date-and-time field.
      for (const name of ['Name', 'Due', 'Meeting', 'Site', 'Owner']) await form.getByRole('group', { name }).waitFor();
      expect(await form.getByLabel('Edit Meeting').inputValue()).toBe('2026-03-04T09:30');
      const due = form.getByRole('group', { name: 'Due' }).getByLabel('Edit Due');
      await due.focus();
      await s.page.keyboard.type('01152027');
      await s.page.keyboard.press('Enter');
      const safe = async () => (await gw<{ rows: Array<Record<string, unknown>> }>('rows/?table_name=Table1&convert_keys=true')).data.rows.find((r) => r.Name === 'Safe');
      await expect.poll(async () => (await safe())?.Due).toMatch(/^2027-01-15/);
      // Tabbing through untouched fields writes nothing: the meeting keeps its time of day.
      for (let i = 0; i < 4; i++) await s.page.keyboard.press('Tab');
      expect((await safe())?.Meeting).toMatch(/^2026-03-04.09:30/);
      await form.getByRole('button', { name: 'Edit Owner' }).waitFor();
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      await s.page.screenshot({ path: 'docs/screenshots/expanded-row.png' });
      await s.page.keyboard.press('Escape');
      await form.waitFor({ state: 'detached' });
      await expect.poll(() => cellOf(s.page, 'Safe', 'Due').innerText()).toBe('15.01.2027');
    });
  });

  it('"Use the API" shows this base\'s Base-Token exchange; the curl, Python and JavaScript examples work as shown', async () => {
    const created = await call<{ api_token: string }>(`/api/v2.1/workspace/${s.workspaceId}/dtable/${encodeURIComponent(BASE)}/api-tokens/`, {
      method: 'POST',
      body: { app_name: 'example', permission: 'r' },
    });
    expect(created.status).toBe(201);
    const apiToken = created.data.api_token;
    const examples: Record<string, string> = {};
    const page = await newConsolePage(s.browser, { viewport: { width: 1280, height: 800 } });
    await step(page, 'use-the-api', async () => {
      await signIn(page, s.url, ADMIN.email, ADMIN.password);
      await page.goto(`${s.url}/#/base/${s.workspaceId}/${encodeURIComponent(BASE)}/integrations`);
      await page.getByRole('heading', { name: 'Use the API' }).waitFor();
      for (const [label, id] of [['curl', 'curl'], ['Python', 'python'], ['JavaScript', 'javascript']] as const) {
        await page.getByRole('radiogroup', { name: 'Example language' }).getByLabel(label).check();
        examples[id] = await page.getByTestId(`api-example-${id}`).innerText();
      }
    });
    for (const code of Object.values(examples)) expect(code).toContain(s.url);
    expect(examples.python).toContain('base.list_rows("Table1")');
    // Run them as a person would after pasting their token.
    // Asynchronously: the server answering it runs in this process.
    const { stdout: curl } = await promisify(execFile)('bash', ['-c', examples.curl!.replaceAll('YOUR_API_TOKEN', apiToken)], { encoding: 'utf8', timeout: 20_000 });
    expect((JSON.parse(curl) as { rows: Array<{ Name: string }> }).rows.map((r) => r.Name)).toContain('Safe');
    const AsyncFunction = Object.getPrototypeOf(async () => undefined).constructor as new (...args: string[]) => (console: { log(v: unknown): void }) => Promise<void>;
    const logged: unknown[] = [];
    await new AsyncFunction('console', examples.javascript!.replaceAll('YOUR_API_TOKEN', apiToken))({ log: (v) => logged.push(v) });
    expect((logged[0] as Array<{ Name: string }>).map((r) => r.Name)).toContain('Safe');
    // The Python one with the SDK it names (the vendored copy of seatable-api, as the tutorial's test uses).
    const { stdout: python } = await promisify(execFile)(process.env.TEST_PYTHON ?? '/usr/bin/python3', ['-c', examples.python!.replaceAll('YOUR_API_TOKEN', apiToken)], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, PYTHONPATH: path.resolve('test/compat/python-sdk') },
    });
    expect(python).toContain("'Name': 'Safe'");
  });

  it('the API reference at /api/docs/ renders in the browser (under the page\'s CSP) with each operation\'s summary and description; the console links to it', async () => {
    const page = await newConsolePage(s.browser, { viewport: { width: 1280, height: 800 } });
    const blocked: string[] = [];
    page.on('console', (m) => m.type() === 'error' && blocked.push(m.text()));
    await step(page, 'api-docs', async () => {
      await signIn(page, s.url, ADMIN.email, ADMIN.password);
      await page.goto(`${s.url}/#/base/${s.workspaceId}/${encodeURIComponent(BASE)}/integrations`);
      await page.getByRole('link', { name: '/api/docs/' }).click();
      await page.waitForURL(`${s.url}/api/docs/**`);
      // The viewer lists the operations with their summaries; one opened shows its description.
      const summaries = page.locator('.opblock-summary-description');
      await summaries.first().waitFor({ timeout: 20_000 });
      const texts = await summaries.allInnerTexts();
      expect(texts.length).toBeGreaterThan(3);
      expect(texts.filter((text) => text.trim() === '')).toEqual([]);
      await page.locator('.opblock-summary').first().click();
      await page.locator('.opblock-description-wrapper').first().waitFor();
      expect((await page.locator('.opblock-description-wrapper').first().innerText()).trim().length).toBeGreaterThan(20);
      expect(blocked.filter((text) => /Content Security Policy/i.test(text))).toEqual([]);
    });
    await page.context().close();
  }, 60_000);

  it('paste of a 2×2 block from a spreadsheet fills cells and adds rows (one undo step); Delete clears a cell; Ctrl+C copies it', async () => {
    const rowsNow = async () => (await gw<{ rows: Array<Record<string, unknown>> }>('rows/?table_name=Table1&convert_keys=true')).data.rows;
    const page = await newConsolePage(s.browser, { viewport: { width: 1280, height: 800 } });
    const clipboard = (type: 'copy' | 'paste', text = '') =>
      page.evaluate(
        ({ type, text }) => {
          const data = new DataTransfer();
          data.setData('text/plain', text);
          document.activeElement!.dispatchEvent(new ClipboardEvent(type, { clipboardData: data, bubbles: true, cancelable: true }));
          return data.getData('text/plain');
        },
        { type, text },
      );
    let lastRow: Record<string, unknown> = {};
    await step(page, 'paste-block', async () => {
      await signIn(page, s.url, ADMIN.email, ADMIN.password);
      await page.goto(s.baseUrl);
      await grid(page).waitFor();
      lastRow = (await rowsNow()).at(-1)!;
      const last = lastRow.Name as string;
      await cellOf(page, last, 'Name').click();
      // Name and Due of the last row, and one new row below it.
      await clipboard('paste', 'Pasted one\t2027-02-01\nPasted two\t2027-03-01\n');
      await expect.poll(async () => (await rowsNow()).length).toBe(4);
      const rows = await rowsNow();
      expect(rows.find((r) => r.Name === 'Pasted one')?.Due).toMatch(/^2027-02-01/);
      expect(rows.find((r) => r.Name === 'Pasted two')?.Due).toMatch(/^2027-03-01/);
      await expect.poll(() => grid(page).innerText()).toContain('Pasted two');
    });
    await step(page, 'delete-copy', async () => {
      await cellOf(page, 'Pasted one', 'Due').click();
      expect(await clipboard('copy')).toMatch(/^2027-02-01/);
      await page.keyboard.press('Delete');
      await expect.poll(async () => (await rowsNow()).find((r) => r.Name === 'Pasted one')?.Due ?? null).toBe(null);
      await page.keyboard.press('Control+z');
      await expect.poll(async () => (await rowsNow()).find((r) => r.Name === 'Pasted one')?.Due).toMatch(/^2027-02-01/);
    });
    await step(page, 'paste-undo', async () => {
      const pastedTwo = (await rowsNow()).find((r) => r.Name === 'Pasted two')!._id;
      // The paste is one step: its cell edits and the row it appended go back together, and come again.
      await page.keyboard.press('Control+z');
      await expect.poll(async () => (await rowsNow()).length).toBe(3);
      // The appended row goes first, then the cells (the step's parts newest first).
      await expect.poll(async () => {
        const back = (await rowsNow()).find((r) => r._id === lastRow._id)!;
        return [back.Name, back.Due ?? null];
      }).toEqual([lastRow.Name, lastRow.Due ?? null]);
      await expect.poll(() => grid(page).innerText()).not.toContain('Pasted');
      await page.keyboard.press('Control+Shift+Z');
      await expect.poll(async () => (await rowsNow()).find((r) => r.Name === 'Pasted two')?._id).toBe(pastedTwo);
      expect((await rowsNow()).find((r) => r._id === lastRow._id)?.Name).toBe('Pasted one');
      await expect.poll(() => grid(page).innerText()).toContain('Pasted two');
    });
  });
});
