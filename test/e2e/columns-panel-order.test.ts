import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSuite, step } from './browser.js';

const BASE = 'Column order';
type Column = { name: string; key: string };
type View = { name: string; column_order?: string[] };
type Meta = { metadata: { tables: Array<{ columns: Column[]; views: View[] }> } };

/**
 * The columns panel's move buttons (issue #29 item 2): they move a column in the current view's order,
 * as dragging a header does, with the keyboard alone; the grid shows the order, the view keeps it on
 * the server, the table's order and another view's are unchanged.
 */
describe('console: the columns panel moves columns in the view (headless Chromium)', () => {
  const s = new ConsoleSuite(BASE);
  const { gw } = s;
  const meta = async () => (await gw<Meta>('metadata/')).data.metadata.tables[0]!;
  const headers = () => s.page.locator('.grid [role=columnheader]').allInnerTexts().then((texts) => texts.map((x) => x.trim()));
  const orderOf = async (view: string) => {
    const table = await meta();
    const names = new Map(table.columns.map((c) => [c.key, c.name]));
    return table.views.find((v) => v.name === view)?.column_order?.map((k) => names.get(k));
  };

  beforeAll(async () => {
    await s.start();
    await s.createBase();
    for (const name of ['A', 'B', 'C']) expect((await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: name, column_type: 'text' } })).status).toBe(200);
    expect((await gw('views/?table_name=Table1', { method: 'POST', body: { name: 'Other' } })).status).toBe(200);
    // The default view has an order of its own: C, A, B.
    const keys = new Map((await meta()).columns.map((c) => [c.name, c.key]));
    const put = await gw('views/Default%20View/?table_name=Table1', { method: 'PUT', body: { column_order: ['C', 'A', 'B'].map((n) => keys.get(n)) } });
    expect(put.status).toBe(200);
    await s.openPage({ viewport: { width: 1280, height: 800 } });
  }, 90_000);

  afterAll(() => s.close());

  it('moves a column right and left in the view’s order with the keyboard; the table and the other view keep theirs', async () => {
    await step(s.page, 'panel-move', async () => {
      await s.page.goto(s.baseUrl);
      await s.page.getByRole('grid', { name: 'Rows of Table1' }).waitFor();
      await expect.poll(headers).toEqual(['', 'Name', 'C', 'A', 'B']);
      await s.page.getByRole('button', { name: 'Columns', exact: true }).click();
      // The panel lists the columns as the view shows them; the first column stays first.
      await expect.poll(() => s.page.locator('.panel table.list td:first-child').allInnerTexts()).toEqual(['Name', 'C', 'A', 'B']);
      expect(await s.page.getByRole('button', { name: 'Move Name right' }).isDisabled()).toBe(true);
      expect(await s.page.getByRole('button', { name: 'Move C left' }).isDisabled()).toBe(true);

      await s.page.getByRole('button', { name: 'Move A right' }).focus();
      await s.page.keyboard.press('Enter');
      await expect.poll(() => orderOf('Default View')).toEqual(['C', 'B', 'A']);
      await expect.poll(headers).toEqual(['', 'Name', 'C', 'B', 'A']);
      await expect.poll(() => s.page.locator('.panel table.list td:first-child').allInnerTexts()).toEqual(['Name', 'C', 'B', 'A']);

      await s.page.getByRole('button', { name: 'Move B left' }).focus();
      await s.page.keyboard.press('Space');
      await expect.poll(() => orderOf('Default View')).toEqual(['B', 'C', 'A']);
      await expect.poll(headers).toEqual(['', 'Name', 'B', 'C', 'A']);

      // The table's own order and the other view are as they were.
      expect((await meta()).columns.map((c) => c.name)).toEqual(['Name', 'A', 'B', 'C']);
      expect(await orderOf('Other')).toBeUndefined();
      await s.page.getByRole('combobox', { name: 'View' }).selectOption('Other');
      await expect.poll(headers).toEqual(['', 'Name', 'A', 'B', 'C']);
    });
  }, 60_000);
});
