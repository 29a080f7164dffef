import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSuite, newConsolePage, signIn, step } from './browser.js';

const BASE = 'Undo rights';
const BOB = { email: 'bob@undo.test', password: 'bob-password-1', name: 'Bob Writer' };

/**
 * Undo in the grid (issue #29 item 2) beyond the owner: a read-write user, whom the server does not let
 * revert operations (`restore-operations/` is for owners and admins), undoes and redoes a cell edit, a
 * row delete and an added row by doing them by hand (the deleted row comes back with its cells); and a
 * step of two parts refused halfway (409: someone changed the pasted cell since) is put back whole, with
 * a clear message, and stays undoable (no redo of a half step).
 */
describe('console: undo for a read-write user, and a step refused halfway (headless Chromium)', () => {
  const s = new ConsoleSuite(BASE);
  const { call, gw } = s;
  const rowsNow = () => s.rowsOf('Table1');
  const grid = (p: Page) => p.getByRole('grid', { name: 'Rows of Table1' });
  const rowOf = (p: Page, name: string) => p.locator('.grid [role=row]').filter({ hasText: name });
  /** Column 1 is the row selection, 2 Name, 3 Qty. */
  const cellOf = (p: Page, name: string, col: number) => rowOf(p, name).locator(`[role=gridcell][aria-colindex="${col}"]`);
  const paste = (p: Page, text: string) =>
    p.evaluate((text) => {
      const data = new DataTransfer();
      data.setData('text/plain', text);
      document.activeElement!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, text);
  const names = async () => (await rowsNow()).map((r) => (r.Name as string | undefined) ?? '');
  const open = async (p: Page) => {
    await p.goto(s.baseUrl);
    await p.reload();
    await grid(p).waitFor();
  };

  beforeAll(async () => {
    await s.start();
    expect((await call('/api/v2.1/admin/users/', { method: 'POST', body: BOB })).status).toBeLessThan(300);
    await s.createBase();
    expect((await call(`/api/v2.1/workspace/${s.workspaceId}/dtable/${encodeURIComponent(BASE)}/share/`, { method: 'POST', body: { email: BOB.email, permission: 'rw' } })).status).toBeLessThan(300);
    await s.seedQtyTable([
      { Name: 'Alpha', Qty: 1 },
      { Name: 'Beta', Qty: 2 },
      { Name: 'Gamma', Qty: 3 },
    ]);
  }, 90_000);

  afterAll(() => s.close());

  it('a read-write user undoes and redoes a cell edit, a row delete (the row comes back with its cells) and an added row', async () => {
    const page = await newConsolePage(s.browser, { viewport: { width: 1280, height: 800 } });
    page.on('dialog', (d) => void d.accept());
    try {
      await step(page, 'rw-undo-do', async () => {
        await signIn(page, s.url, BOB.email, BOB.password);
        await open(page);
        // The server keeps reverts to owners and admins: Bob's undo cannot use it.
        const bobToken = await (await fetch(`${s.url}/api2/auth-token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: BOB.email, password: BOB.password }) })).json() as { token: string };
        const access = await call<{ access_token: string }>(`/api/v2.1/workspace/${s.workspaceId}/dtable/${encodeURIComponent(BASE)}/access-token/`, { token: bobToken.token });
        const ops = await call<{ operations: Array<{ op_id: number }> }>(`/api-gateway/api/v2/dtables/${s.baseUuid}/operations/?per_page=1`, { token: access.data.access_token });
        expect((await call(`/api-gateway/api/v2/dtables/${s.baseUuid}/restore-operations/${ops.data.operations[0]!.op_id}/`, { method: 'PUT', body: {}, token: access.data.access_token })).status).toBe(403);

        await cellOf(page, 'Alpha', 2).click();
        await paste(page, 'Alpha two');
        await expect.poll(names).toEqual(['Alpha two', 'Beta', 'Gamma']);
        await rowOf(page, 'Beta').getByRole('checkbox', { name: 'Select' }).check();
        await page.getByRole('button', { name: 'Delete 1 row(s)' }).click();
        await expect.poll(names).toEqual(['Alpha two', 'Gamma']);
        await page.getByRole('button', { name: '+ Row' }).click();
        await expect.poll(names).toEqual(['Alpha two', 'Gamma', '']);
        await expect.poll(() => grid(page).locator('[role=row]').count()).toBe(4);
      });
      const undo = page.getByRole('button', { name: 'Undo', exact: true });
      const redo = page.getByRole('button', { name: 'Redo', exact: true });
      await step(page, 'rw-undo', async () => {
        await undo.click();
        await expect.poll(names).toEqual(['Alpha two', 'Gamma']);
        await undo.click();
        await expect.poll(async () => (await rowsNow()).map((r) => [r.Name, r.Qty])).toEqual([
          ['Alpha two', 1],
          ['Gamma', 3],
          ['Beta', 2],
        ]);
        await undo.click();
        await expect.poll(names).toEqual(['Alpha', 'Gamma', 'Beta']);
        await expect.poll(() => grid(page).innerText()).toContain('Beta');
        await expect.poll(() => undo.isDisabled()).toBe(true);
        expect(await page.getByRole('alert').count()).toBe(0);
      });
      await step(page, 'rw-redo', async () => {
        await redo.click();
        await expect.poll(names).toEqual(['Alpha two', 'Gamma', 'Beta']);
        await redo.click();
        await expect.poll(names).toEqual(['Alpha two', 'Gamma']);
        await redo.click();
        await expect.poll(names).toEqual(['Alpha two', 'Gamma', '']);
        await expect.poll(() => redo.isDisabled()).toBe(true);
        // And back once more: the row added again by the redo is the one the next undo deletes.
        await undo.click();
        await expect.poll(names).toEqual(['Alpha two', 'Gamma']);
        expect(await page.getByRole('alert').count()).toBe(0);
      });
    } finally {
      await page.context().close();
    }
  }, 90_000);

  it('a paste of a cell and a new row, refused halfway by a later change to the cell: put back whole, said clearly, still undoable, no redo', async () => {
    const page = await s.openPage({ viewport: { width: 1280, height: 800 } });
    await step(page, 'refused-halfway', async () => {
      // Rows of its own, whatever the case before left.
      await gw('rows/', { method: 'DELETE', body: { table_name: 'Table1', row_ids: (await rowsNow()).map((r) => r._id) } });
      expect((await gw('rows/', { method: 'POST', body: { table_name: 'Table1', rows: [{ Name: 'One' }, { Name: 'Two' }] } })).status).toBe(200);
      await open(page);
      const before = await rowsNow();
      const last = before.at(-1)!;
      await cellOf(page, last.Name as string, 2).click();
      // Each part's write is followed by a look-up of its logged operation (what undo restores); the other
      // change must come after both, or a late look-up finds that change's operation instead (it did, once,
      // on a loaded CI run: the undo then reverted the other change and was not refused).
      let lookups = 0;
      page.on('response', (r) => {
        if (/\/operations\/\?/.test(r.url())) lookups += 1;
      });
      // The last row's Name and one new row: one step of two parts.
      await paste(page, 'Pasted\nNew row');
      await expect.poll(names).toEqual([...before.slice(0, -1).map((r) => r.Name), 'Pasted', 'New row']);
      await expect.poll(() => lookups).toBeGreaterThanOrEqual(2);
      // Someone else changes the pasted cell since.
      expect((await gw('rows/', { method: 'PUT', body: { table_name: 'Table1', updates: [{ row_id: last._id, row: { Name: 'Changed by someone' } }] } })).status).toBe(200);
      await expect.poll(() => grid(page).innerText()).toContain('Changed by someone');
      const undo = page.getByRole('button', { name: 'Undo', exact: true });
      await undo.click();
      // The added row was reverted first, then the cell was refused: the row is put back, the other change kept.
      await page.getByRole('alert').filter({ hasText: /^Undo refused: .+ Nothing was undone/ }).waitFor();
      await expect.poll(names).toEqual([...before.slice(0, -1).map((r) => r.Name), 'Changed by someone', 'New row']);
      await expect.poll(() => grid(page).innerText()).toContain('New row');
      expect(await undo.isDisabled()).toBe(false);
      expect(await page.getByRole('button', { name: 'Redo', exact: true }).isDisabled()).toBe(true);
    });
  }, 60_000);
});
