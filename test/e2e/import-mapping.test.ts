import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSuite, step } from './browser.js';
import { seriousAxeViolations, unnamedControls } from './accessibility.js';

const BASE = 'Import mapping';
type Meta = { metadata: { tables: Array<{ name: string; columns: Array<{ name: string; type: string }> }> } };

async function xlsx(sheets: Record<string, unknown[][]>): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  for (const [name, rows] of Object.entries(sheets)) workbook.addWorksheet(name).addRows(rows);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

/**
 * Import with an editable column mapping in the console (issue #29 item 3): each column of the file goes
 * to a new column (its name and type changeable), a column of the existing table, or nowhere; the first
 * rows are shown as mapped; a real XLSX becomes a new table and a CSV is appended to an existing one,
 * and the server holds the rows as mapped.
 */
describe('console: import with a column mapping, XLSX and CSV (headless Chromium)', () => {
  const s = new ConsoleSuite(BASE);
  const { gw } = s;
  const rowsOf = (table: string) => s.rowsOf(table);
  const columnsOf = async (table: string) => (await gw<Meta>('metadata/')).data.metadata.tables.find((tb) => tb.name === table)?.columns.map((c) => `${c.name}:${c.type}`);
  const panel = () => s.page.getByRole('region', { name: 'Import and export' });
  const sampleOf = (sheet: string) => panel().getByRole('table', { name: `First rows of ${sheet}` });
  const openPanel = async () => {
    await s.page.goto(s.baseUrl);
    await s.page.reload();
    await s.page.getByRole('grid', { name: 'Rows of Table1' }).waitFor();
    await s.page.getByRole('button', { name: 'Import / export' }).click();
    await panel().waitFor();
  };

  beforeAll(async () => {
    await s.start();
    await s.createBase();
    await s.seedQtyTable([{ Name: 'Alpha', Qty: 1 }]);
    await s.openPage({ viewport: { width: 1280, height: 800 } });
  }, 90_000);

  afterAll(() => s.close());

  it('an XLSX into a new table: a column renamed, one retyped, one skipped; the preview follows; the rows on the server as mapped', async () => {
    await step(s.page, 'xlsx-mapping', async () => {
      await openPanel();
      const file = await xlsx({ Inventory: [['Item', 'Count', 'Code', 'Junk'], ['Bolts', 10, 7, 'x'], ['Nuts', 20, 8, 'y'], ['Washers', 30, 9, 'z']] });
      await panel().getByLabel('File (CSV or XLSX)').setInputFiles({ name: 'Stock.xlsx', mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', buffer: file });
      await panel().getByRole('table', { name: 'Columns of Inventory' }).waitFor();
      await expect.poll(() => sampleOf('Inventory').locator('thead th').allInnerTexts()).toEqual(['Item', 'Count', 'Code', 'Junk']);
      // Item becomes Article; Code a text column (its cells are all numbers: number or text may be chosen); Junk is left out.
      // A new column without a name holds the import back.
      await panel().getByLabel('Name of the new column for Item').fill('');
      await expect.poll(() => panel().getByRole('button', { name: 'Import as a new table' }).isDisabled()).toBe(true);
      await panel().getByLabel('Name of the new column for Item').fill('Article');
      await expect.poll(() => panel().getByRole('button', { name: 'Import as a new table' }).isDisabled()).toBe(false);
      const codeType = panel().getByLabel('Type of the new column for Code');
      expect(await codeType.locator('option').allInnerTexts()).toEqual(['Text', 'Number', 'Single select']);
      expect(await codeType.inputValue()).toBe('number');
      await codeType.selectOption({ label: 'Text' });
      await panel().getByLabel('Where Junk goes').selectOption({ label: 'Not imported' });
      await expect.poll(() => sampleOf('Inventory').locator('thead th').allInnerTexts()).toEqual(['Article', 'Count', 'Code']);
      expect(await sampleOf('Inventory').locator('tbody tr').first().locator('td').allInnerTexts()).toEqual(['Bolts', '10', '7']);
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      expect(await unnamedControls(s.page)).toEqual([]);
      await panel().getByRole('button', { name: 'Import as a new table' }).click();
      await panel().getByRole('status').filter({ hasText: 'Imported as table Inventory.' }).waitFor();
      expect(await columnsOf('Inventory')).toEqual(['Article:text', 'Count:number', 'Code:text']);
      expect((await rowsOf('Inventory')).map((r) => [r.Article, r.Count, r.Code, r.Junk])).toEqual([
        ['Bolts', 10, '7', undefined],
        ['Nuts', 20, '8', undefined],
        ['Washers', 30, '9', undefined],
      ]);
    });
  }, 60_000);

  it('a CSV appended to an existing table: columns of other names mapped to its columns, one to a new column, one skipped', async () => {
    await step(s.page, 'csv-mapping', async () => {
      await openPanel();
      const csv = 'Product,Amount,Colour,Extra\nGamma,3,red,zz\nDelta,4,blue,zz\n';
      await panel().getByLabel('File (CSV or XLSX)').setInputFiles({ name: 'more.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await panel().getByRole('table', { name: 'Columns of more' }).waitFor();
      await panel().getByLabel('Import into').selectOption({ label: 'Table “Table1” (append rows)' });
      // No column of the file has a name of the table's: none is imported until mapped.
      await expect.poll(() => panel().getByLabel('Where Product goes').inputValue()).toBe('skip');
      expect(await sampleOf('more').count()).toBe(0);
      await panel().getByLabel('Where Product goes').selectOption({ label: 'Column “Name”' });
      await panel().getByLabel('Where Amount goes').selectOption({ label: 'Column “Qty”' });
      await panel().getByLabel('Where Colour goes').selectOption({ label: 'A new column' });
      await panel().getByLabel('Name of the new column for Colour').fill('Colour');
      await expect.poll(() => sampleOf('more').locator('thead th').allInnerTexts()).toEqual(['Name', 'Qty', 'Colour']);
      expect(await sampleOf('more').locator('tbody tr').nth(1).locator('td').allInnerTexts()).toEqual(['Delta', '4', 'blue']);
      await panel().getByRole('button', { name: 'Append to “Table1”' }).click();
      await panel().getByRole('status').filter({ hasText: '2 rows appended to “Table1”.' }).waitFor();
      expect(await columnsOf('Table1')).toEqual(['Name:text', 'Qty:number', 'Colour:text']);
      expect((await rowsOf('Table1')).map((r) => [r.Name, r.Qty, r.Colour ?? null, r.Extra])).toEqual([
        ['Alpha', 1, null, undefined],
        ['Gamma', 3, 'red', undefined],
        ['Delta', 4, 'blue', undefined],
      ]);
    });
  }, 60_000);
});
