import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSuite, signIn, step } from './browser.js';
import { seriousAxeViolations, unnamedControls } from './accessibility.js';

const BASE = 'Transfer';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/**
 * Files, import and export in the console (issue #29 item 3), in headless Chromium against a real server:
 * a file cell opened with Enter, files added by choosing and by dropping them (uploaded to the base's
 * assets), listed with name, size and type, downloaded and removed; an image cell with a thumbnail;
 * a view exported as CSV and XLSX; a CSV chosen with the file field, previewed (columns, types, first
 * rows) and imported as a new table; a CSV dropped on the drop zone and appended to an existing table
 * (a column of no match not imported unless mapped); a bad file refused with the server's message.
 */
describe('console: files, import and export (headless Chromium)', () => {
  const s = new ConsoleSuite(BASE);
  const { call, gw } = s;
  const rowsOf = (table: string) => s.rowsOf(table);
  const panel = () => s.page.getByRole('region', { name: 'Import and export' });
  const openBase = async () => {
    await s.page.goto(s.baseUrl);
    await s.page.reload();
    await s.page.getByRole('grid', { name: 'Rows of Table1' }).waitFor();
  };
  const openPanel = async () => {
    await openBase();
    await s.page.getByRole('button', { name: 'Import / export' }).click();
    await panel().waitFor();
  };

  beforeAll(async () => {
    await s.start();
    await s.createBase();
    await s.seedQtyTable([{ Name: 'Alpha', Qty: 1 }, { Name: 'Beta', Qty: 2 }]);
    await s.openPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  }, 90_000);

  afterAll(() => s.close());

  it('exports the view as CSV and XLSX', async () => {
    await step(s.page, 'export', async () => {
      await openPanel();
      await panel().getByRole('heading', { name: 'Export view “Default View”' }).waitFor();
      const [csv] = await Promise.all([s.page.waitForEvent('download'), panel().getByRole('button', { name: 'Export the view as CSV' }).click()]);
      expect(csv.suggestedFilename()).toMatch(/\.csv$/);
      const text = (await readFile((await csv.path())!, 'utf8')).replace(/^\uFEFF/, '');
      expect(text.split(/\r?\n/).filter(Boolean)).toEqual(['Name,Qty', 'Alpha,1', 'Beta,2']);
      const [xlsx] = await Promise.all([s.page.waitForEvent('download'), panel().getByRole('button', { name: 'Export the view as XLSX' }).click()]);
      expect(xlsx.suggestedFilename()).toMatch(/\.xlsx$/);
      expect((await readFile((await xlsx.path())!)).subarray(0, 2).toString()).toBe('PK');
    });
  });

  it('file and image cells: upload by choosing and by dropping, name/size/type, thumbnail, download, remove (keyboard opens and saves)', async () => {
    for (const [name, type] of [
      ['Attachments', 'file'],
      ['Photos', 'image'],
    ]) {
      expect((await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: name, column_type: type } })).status).toBe(200);
    }
    const cell = (row: string, colIndex: number) => s.page.locator('.grid [role=row]').filter({ hasText: row }).locator(`[role=gridcell][aria-colindex="${colIndex}"]`);
    const alpha = async () => (await rowsOf('Table1')).find((r) => r.Name === 'Alpha')!;
    await step(s.page, 'files-upload', async () => {
      await openBase();
      // Columns: selection, Name, Qty, Attachments, Photos.
      await cell('Alpha', 4).click();
      await s.page.keyboard.press('Enter');
      const dialog = s.page.getByRole('dialog', { name: 'Files of Attachments' });
      await dialog.waitFor();
      await dialog.getByLabel('Add files').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello files') });
      const list = dialog.getByRole('list', { name: 'Files in Attachments' });
      await expect.poll(() => list.getByRole('listitem').allInnerTexts()).toEqual([expect.stringMatching(/notes\.txt\s+11 B · TXT file/)]);
      const dropped = await s.page.evaluateHandle(() => {
        const data = new DataTransfer();
        data.items.add(new File(['a,b\n1,2\n'], 'table.csv', { type: 'text/csv' }));
        return data;
      });
      await dialog.getByTestId('files-dropzone').dispatchEvent('drop', { dataTransfer: dropped });
      await expect.poll(() => list.getByRole('listitem').count()).toBe(2);
      expect(await unnamedControls(s.page)).toEqual([]);
      await dialog.getByRole('button', { name: 'Save' }).focus();
      await s.page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(async () => ((await alpha()).Attachments as Array<{ name: string }> | null)?.map((f) => f.name) ?? null).toEqual(['notes.txt', 'table.csv']);
      const stored = (await alpha()).Attachments as Array<{ name: string; size: number; url: string }>;
      expect(stored[0]).toMatchObject({ size: 11, type: 'file' });
      expect(stored[0]!.url.startsWith(`${s.url}/workspace/${s.workspaceId}/asset/${s.baseUuid}/files/`)).toBe(true);
      expect(stored[0]!.url).toMatch(/\/files\/\d{4}-\d{2}\/notes\.txt$/);
      await expect.poll(() => cell('Alpha', 4).innerText()).toBe('notes.txt, table.csv');
    });
    await step(s.page, 'files-download-remove', async () => {
      await cell('Alpha', 4).click();
      await s.page.keyboard.press('Enter');
      const dialog = s.page.getByRole('dialog', { name: 'Files of Attachments' });
      const [download] = await Promise.all([s.page.waitForEvent('download'), dialog.getByRole('button', { name: 'Download notes.txt' }).click()]);
      expect(download.suggestedFilename()).toBe('notes.txt');
      expect(await readFile((await download.path())!, 'utf8')).toBe('hello files');
      await dialog.getByRole('button', { name: 'Remove table.csv' }).click();
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect.poll(async () => ((await alpha()).Attachments as Array<{ name: string }>).map((f) => f.name)).toEqual(['notes.txt']);
    });
    await step(s.page, 'image-thumbnail', async () => {
      await cell('Alpha', 5).click();
      await s.page.keyboard.press('Enter');
      const dialog = s.page.getByRole('dialog', { name: 'Files of Photos' });
      await dialog.getByLabel('Add images').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: PNG });
      const thumb = dialog.getByRole('img', { name: 'Preview of dot.png' });
      await thumb.waitFor();
      await expect.poll(() => thumb.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(1);
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      await s.page.screenshot({ path: 'docs/screenshots/files.png' });
      await dialog.getByRole('button', { name: 'Save' }).click();
      await expect.poll(async () => (await alpha()).Photos as string[] | null).toEqual([expect.stringMatching(new RegExp(`/workspace/${s.workspaceId}/asset/${s.baseUuid}/images/\\d{4}-\\d{2}/dot\\.png$`))]);
      // Escape closes without writing.
      await cell('Alpha', 5).click();
      await s.page.keyboard.press('Enter');
      await dialog.getByRole('button', { name: 'Remove dot.png' }).click();
      await s.page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(((await alpha()).Photos as string[]).length).toBe(1);
    });
  });

  it('a read-only user and an external link open a file or image cell: previews and downloads, no upload or remove', async () => {
    const reader = { email: 'reader@console.test', password: 'reader-password-1', name: 'Reader' };
    expect((await call('/api/v2.1/admin/users/', { method: 'POST', body: reader })).status).toBeLessThan(300);
    expect((await call(`/api/v2.1/workspace/${s.workspaceId}/dtable/${BASE}/share/`, { method: 'POST', body: { email: reader.email, permission: 'r' } })).status).toBeLessThan(300);
    const link = await call<{ url: string }>(`/api/v2.1/workspace/${s.workspaceId}/dtable/${BASE}/external-links/`, { method: 'POST', body: {} });
    // The previous test left Alpha with notes.txt (Attachments, column 4) and dot.png (Photos, column 5).
    const context = await s.browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    const visitor = await context.newPage();
    visitor.setDefaultTimeout(10_000);
    const cell = (colIndex: number) => visitor.locator('.grid [role=row]').filter({ hasText: 'Alpha' }).locator(`[role=gridcell][aria-colindex="${colIndex}"]`);
    const previewAndDownload = async (name: string) => {
      await expect.poll(() => cell(4).innerText()).toBe('notes.txt');
      await cell(4).click();
      await visitor.keyboard.press('Enter');
      const files = visitor.getByRole('dialog', { name: 'Files of Attachments' });
      await files.waitFor();
      const [download] = await Promise.all([visitor.waitForEvent('download'), files.getByRole('button', { name: 'Download notes.txt' }).click()]);
      expect(await readFile((await download.path())!, 'utf8')).toBe('hello files');
      expect(await files.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
      expect(await files.getByLabel('Add files').count()).toBe(0);
      expect(await files.getByRole('button', { name: 'Save' }).count()).toBe(0);
      await visitor.keyboard.press('Escape');
      await files.waitFor({ state: 'detached' });
      // The image cell, opened with a double click: its thumbnail is read with the Base-Token too.
      await cell(5).dblclick();
      const photos = visitor.getByRole('dialog', { name: 'Files of Photos' });
      const thumb = photos.getByRole('img', { name: 'Preview of dot.png' });
      await thumb.waitFor();
      await expect.poll(() => thumb.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBe(1);
      expect(await photos.getByLabel('Add images').count()).toBe(0);
      expect(await seriousAxeViolations(visitor)).toEqual([]);
      if (name === 'external') await visitor.screenshot({ path: 'docs/screenshots/files-read-only.png' });
      await photos.getByRole('button', { name: 'Close' }).click();
      await photos.waitFor({ state: 'detached' });
      // Nothing changed.
      expect(((await rowsOf('Table1')).find((r) => r.Name === 'Alpha')!.Attachments as Array<{ name: string }>).map((f) => f.name)).toEqual(['notes.txt']);
    };
    try {
      await step(visitor, 'files-read-only-user', async () => {
        await signIn(visitor, s.url, reader.email, reader.password);
        await visitor.goto(s.baseUrl);
        await visitor.getByRole('grid', { name: 'Rows of Table1' }).waitFor();
        await visitor.getByRole('note').filter({ hasText: 'Read-only' }).waitFor();
        await previewAndDownload('reader');
      });
      await step(visitor, 'files-external-link', async () => {
        await context.clearCookies();
        await visitor.evaluate(() => {
          sessionStorage.clear();
          localStorage.clear();
        });
        await visitor.goto('about:blank');
        await visitor.goto(link.data.url);
        await visitor.getByRole('grid', { name: 'Rows of Table1' }).waitFor();
        expect(await visitor.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
        await previewAndDownload('external');
      });
    } finally {
      await context.close();
    }
  });

  it('previews a chosen CSV (columns, types, first rows) and imports it as a new table', async () => {
    await step(s.page, 'import-new-table', async () => {
      await openPanel();
      const csv = 'Item,Count,When\nBolts,10,2026-01-05\nNuts,20,2026-02-06\nWashers,30,2026-03-07\n';
      await panel().getByLabel('File (CSV or XLSX)').setInputFiles({ name: 'Stock.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      const mapping = panel().getByRole('table', { name: 'Columns of Stock' });
      await mapping.waitFor();
      // Each column to a new column of its name and inferred type (changeable: import-mapping.test.ts).
      await expect.poll(() => mapping.locator('tbody th').allInnerTexts()).toEqual(['Item', 'Count', 'When']);
      expect(await mapping.locator('tbody td:nth-of-type(1)').allInnerTexts()).toEqual(['Text', 'Number', 'Date']);
      for (const [column, type] of [
        ['Item', 'text'],
        ['Count', 'number'],
        ['When', 'date'],
      ]) {
        expect(await panel().getByLabel(`Where ${column} goes`).inputValue()).toBe('new');
        expect(await panel().getByLabel(`Name of the new column for ${column}`).inputValue()).toBe(column);
        expect(await panel().getByLabel(`Type of the new column for ${column}`).inputValue()).toBe(type);
      }
      expect(await panel().getByRole('table', { name: 'Columns of Stock' }).locator('caption').innerText()).toBe('Stock: 3 rows');
      expect(await panel().getByRole('table', { name: 'First rows of Stock' }).locator('tbody tr').count()).toBe(3);
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      expect(await unnamedControls(s.page)).toEqual([]);
      await s.page.screenshot({ path: 'docs/screenshots/import-preview.png' });
      // Nothing is written by the preview.
      expect((await gw<{ metadata: { tables: Array<{ name: string }> } }>('metadata/')).data.metadata.tables.map((tb) => tb.name)).toEqual(['Table1']);
      await panel().getByRole('button', { name: 'Import as a new table' }).click();
      await panel().getByRole('status').filter({ hasText: 'Imported as table Stock.' }).waitFor();
      await s.page.getByRole('navigation', { name: 'Tables' }).getByRole('link', { name: 'Stock' }).waitFor();
      expect((await rowsOf('Stock')).map((r) => [r.Item, r.Count])).toEqual([
        ['Bolts', 10],
        ['Nuts', 20],
        ['Washers', 30],
      ]);
    });
  });

  it('appends a dropped CSV to an existing table: same-named columns filled, the others shown as not imported', async () => {
    await step(s.page, 'import-append-drop', async () => {
      const dropped = await s.page.evaluateHandle(() => {
        const data = new DataTransfer();
        data.items.add(new File(['Name,Qty,Colour\nGamma,3,red\nDelta,4,blue\n'], 'more.csv', { type: 'text/csv' }));
        return data;
      });
      await panel().getByTestId('import-dropzone').dispatchEvent('drop', { dataTransfer: dropped });
      await panel().getByLabel('Import into').selectOption({ label: 'Table “Table1” (append rows)' });
      const mapping = panel().getByRole('table', { name: 'Columns of more' });
      await expect.poll(() => mapping.locator('tbody th').allInnerTexts()).toEqual(['Name', 'Qty', 'Colour']);
      await expect.poll(() => panel().getByLabel('Where Name goes').inputValue()).toBe('column:Name');
      expect(await panel().getByLabel('Where Qty goes').inputValue()).toBe('column:Qty');
      expect(await panel().getByLabel('Where Colour goes').inputValue()).toBe('skip');
      await panel().getByRole('button', { name: 'Append to “Table1”' }).click();
      await panel().getByRole('status').filter({ hasText: '2 rows appended to “Table1”.' }).waitFor();
      expect((await rowsOf('Table1')).map((r) => [r.Name, r.Qty])).toEqual([
        ['Alpha', 1],
        ['Beta', 2],
        ['Gamma', 3],
        ['Delta', 4],
      ]);
    });
  });

  it('shows the server’s message for a bad file and writes nothing', async () => {
    await step(s.page, 'import-bad-file', async () => {
      const before = (await rowsOf('Table1')).length;
      await panel().getByLabel('File (CSV or XLSX)').setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('Name,Qty\n=SUM(1),1\n') });
      await panel().getByRole('alert').filter({ hasText: /formula/i }).waitFor();
      await expect(panel().getByRole('button', { name: /^Import as a new table|^Append to/ }).count()).resolves.toBe(0);
      expect((await rowsOf('Table1')).length).toBe(before);
    });
  });
});
