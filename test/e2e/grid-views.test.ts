import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSuite, ADMIN, signIn, step } from './browser.js';
import { seriousAxeViolations, unnamedControls } from './accessibility.js';

const BASE = 'Grid views';
type Meta = { metadata: { tables: Array<{ columns: Array<{ name: string; key: string; width?: number }>; views: Array<{ name: string; groupbys?: Array<{ column_key: string }>; column_widths?: Record<string, number>; column_order?: string[] }> }> } };

/**
 * The grid of a spreadsheet-database (issue #29 item 2), in headless Chromium against a real server:
 * a block of cells selected with the keyboard alone and with the mouse, copied as tab-separated text,
 * cleared with Delete, filled by a pasted 2×2 block (adding a row); rows grouped by a column (saved
 * in the view); column widths and order changed by dragging (saved on the table's columns).
 */
describe('console: range selection, grouping, column layout (headless Chromium)', () => {
  const s = new ConsoleSuite(BASE);
  const { gw } = s;
  const rowsNow = () => s.rowsOf('Table1');
  const byName = async (name: string) => (await rowsNow()).find((r) => r.Name === name);
  const columnsNow = async () => (await gw<Meta>('metadata/')).data.metadata.tables[0]!.columns;
  const grid = () => s.page.getByRole('grid', { name: 'Rows of Table1' });
  const columnIndex: Record<string, number> = {};
  const cellOf = (rowName: string, column: string) =>
    s.page.locator('.grid [role=row]').filter({ hasText: rowName }).locator(`[role=gridcell][aria-colindex="${columnIndex[column]}"]`);
  const rangeStatus = () => s.page.getByRole('status', { name: 'Selected cells' });
  /** A copy or paste event on the focused element, as the browser sends for Ctrl+C / Ctrl+V; returns what was put on the clipboard. */
  const clipboard = (type: 'copy' | 'paste', text = '') =>
    s.page.evaluate(
      ({ type, text }) => {
        const data = new DataTransfer();
        data.setData('text/plain', text);
        document.activeElement!.dispatchEvent(new ClipboardEvent(type, { clipboardData: data, bubbles: true, cancelable: true }));
        return data.getData('text/plain');
      },
      { type, text },
    );

  beforeAll(async () => {
    await s.start();
    await s.createBase();
    for (const [name, type, data] of [
      ['Qty', 'number'],
      ['Note', 'text'],
      ['Stage', 'single-select', { options: [{ name: 'Todo', color: '#eee' }, { name: 'Done', color: '#cfc' }] }],
    ] as Array<[string, string, Record<string, unknown>?]>) {
      const added = await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: name, column_type: type, ...(data ? { column_data: data } : {}) } });
      expect(added.status).toBe(200);
    }
    const blank = await rowsNow();
    await gw('rows/', { method: 'DELETE', body: { table_name: 'Table1', row_ids: blank.map((r) => r._id) } });
    const rows = [
      { Name: 'Alpha', Qty: 1, Note: 'a', Stage: 'Todo' },
      { Name: 'Beta', Qty: 2, Note: 'b', Stage: 'Done' },
      { Name: 'Gamma', Qty: 3, Note: 'c', Stage: 'Todo' },
      { Name: 'Delta', Qty: 4, Note: 'd' },
    ];
    expect((await gw('rows/', { method: 'POST', body: { table_name: 'Table1', rows } })).status).toBe(200);
    // Column 1 is the row selection; the table's columns follow in order.
    (await columnsNow()).forEach((c, i) => (columnIndex[c.name] = i + 2));
    await s.openPage({ viewport: { width: 1280, height: 800 } });
  }, 90_000);

  afterAll(() => s.close());

  it('keyboard alone: Shift+arrows select a block; Ctrl+C copies it as TSV, Delete clears it (undoable), a pasted 2×2 block fills cells and adds a row', async () => {
    await step(s.page, 'range-keyboard', async () => {
      await s.page.goto(s.baseUrl);
      await grid().waitFor();
      await cellOf('Beta', 'Qty').click();
      // From here on only keys.
      await s.page.keyboard.press('Shift+ArrowRight');
      await s.page.keyboard.press('Shift+ArrowDown');
      await rangeStatus().filter({ hasText: '2 × 2 cells' }).waitFor();
      await expect.poll(() => s.page.locator('.grid .in-range').count()).toBe(2);
      expect(await clipboard('copy')).toBe('2\tb\n3\tc');
      await s.page.keyboard.press('Delete');
      await expect.poll(async () => [(await byName('Beta'))?.Qty ?? null, (await byName('Gamma'))?.Note ?? null]).toEqual([null, null]);
      // Only the block: the cells beside it keep their values.
      expect((await byName('Beta'))?.Stage).toBe('Done');
      expect((await byName('Alpha'))?.Qty).toBe(1);
      await s.page.keyboard.press('Control+z');
      await expect.poll(async () => [(await byName('Beta'))?.Qty, (await byName('Gamma'))?.Note]).toEqual([2, 'c']);
      // Escape ends the block; the grid's own arrows move the cell again.
      await s.page.keyboard.press('Escape');
      await expect.poll(() => rangeStatus().count()).toBe(0);
    });
    await step(s.page, 'range-paste', async () => {
      await cellOf('Delta', 'Qty').click();
      await s.page.keyboard.press('Shift+ArrowRight');
      await rangeStatus().filter({ hasText: '1 × 2 cells' }).waitFor();
      // A 2×2 block from a spreadsheet on Delta's Qty and Note: fills them and adds one row below (one append).
      await clipboard('paste', '40\tforty\r\n50\tfifty\r\n');
      await expect.poll(async () => (await rowsNow()).length).toBe(5);
      const rows = await rowsNow();
      expect(rows.find((r) => r.Name === 'Delta')).toMatchObject({ Qty: 40, Note: 'forty' });
      expect(rows.find((r) => r.Qty === 50)).toMatchObject({ Note: 'fifty' });
      // The pasted cells are the new block.
      await rangeStatus().filter({ hasText: '2 × 2 cells' }).waitFor();
      // One value pasted on a block fills all of it.
      await cellOf('Alpha', 'Note').click();
      await s.page.keyboard.press('Shift+ArrowDown');
      await clipboard('paste', 'same');
      await expect.poll(async () => [(await byName('Alpha'))?.Note, (await byName('Beta'))?.Note]).toEqual(['same', 'same']);
    });
  });

  it('the mouse: a drag across cells and Shift+click select a block', async () => {
    await step(s.page, 'range-mouse', async () => {
      const from = await cellOf('Alpha', 'Name').boundingBox();
      const to = await cellOf('Gamma', 'Note').boundingBox();
      await s.page.mouse.move(from!.x + 10, from!.y + 10);
      await s.page.mouse.down();
      await s.page.mouse.move(from!.x + 40, from!.y + 20, { steps: 3 });
      await s.page.mouse.move(to!.x + 10, to!.y + 10, { steps: 8 });
      await s.page.mouse.up();
      await rangeStatus().filter({ hasText: '3 × 3 cells' }).waitFor();
      expect(await clipboard('copy')).toBe('Alpha\t1\tsame\nBeta\t2\tsame\nGamma\t3\tc');
      await cellOf('Beta', 'Name').click({ modifiers: ['Shift'] });
      await rangeStatus().filter({ hasText: '2 × 1 cells' }).waitFor();
      // A plain click ends the block.
      await cellOf('Delta', 'Name').click();
      await expect.poll(() => rangeStatus().count()).toBe(0);
    });
  });

  it('group by a column (saved in the view), collapse a group with the keyboard; column width and order by dragging, saved in the view', async () => {
    await step(s.page, 'group-by', async () => {
      await s.page.getByRole('button', { name: 'Group', exact: true }).click();
      await s.page.getByRole('group', { name: 'Group rows' }).getByLabel('Group by').selectOption({ label: 'Stage' });
      await s.page.getByRole('button', { name: 'Group: Stage' }).waitFor();
      const stageKey = (await columnsNow()).find((c) => c.name === 'Stage')!.key;
      const view = await gw<{ groupbys: Array<{ column_key: string }> }>('views/Default%20View/?table_name=Table1');
      expect(view.data.groupbys.map((g) => g.column_key)).toEqual([stageKey]);
      const heads = s.page.locator('.grid .group-head');
      await expect.poll(() => heads.allInnerTexts()).toEqual(['▾ Done (1)', '▾ Todo (2)', '▾ (empty) (2)']);
      // Collapse "Todo" with the keyboard: select its header cell, Enter.
      await cellOf('Beta', 'Name').click();
      await s.page.keyboard.press('ArrowDown');
      await s.page.keyboard.press('Enter');
      await expect.poll(() => heads.allInnerTexts()).toEqual(['▾ Done (1)', '▸ Todo (2)', '▾ (empty) (2)']);
      await expect.poll(() => grid().innerText()).not.toContain('Gamma');
      // Saved: a fresh page shows the grouping.
      await s.page.reload();
      await expect.poll(() => s.page.locator('.grid .group-head').count(), { timeout: 10_000 }).toBe(3);
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      expect(await unnamedControls(s.page)).toEqual([]);
      await s.page.screenshot({ path: 'docs/screenshots/grid-grouped.png' });
      await s.page.getByRole('button', { name: 'Group: Stage' }).click();
      await s.page.getByRole('group', { name: 'Group rows' }).getByLabel('Group by').selectOption({ label: '(none)' });
      await s.page.getByRole('button', { name: 'Group', exact: true }).waitFor();
      await expect.poll(() => s.page.locator('.grid .group-head').count()).toBe(0);
    });
    const viewNow = async (name: string) => (await gw<Meta>('metadata/')).data.metadata.tables[0]!.views.find((v) => v.name === name)!;
    const tableWidths = Object.fromEntries((await columnsNow()).map((c) => [c.name, c.width]));
    const keyOf = async (name: string) => (await columnsNow()).find((c) => c.name === name)!.key;
    const headers = () => s.page.locator('.grid [role=columnheader]').allInnerTexts();
    await step(s.page, 'column-width', async () => {
      const head = s.page.locator('.grid [role=columnheader]').filter({ hasText: 'Note' });
      const box = (await head.boundingBox())!;
      // The resize handle is the header's right edge.
      await s.page.mouse.move(box.x + box.width - 3, box.y + box.height / 2);
      await s.page.mouse.down();
      await s.page.mouse.move(box.x + box.width + 60, box.y + box.height / 2, { steps: 6 });
      await s.page.mouse.up();
      // Saved in the view; the table's column keeps its width.
      const note = await keyOf('Note');
      await expect.poll(async () => (await viewNow('Default View')).column_widths?.[note] ?? 0, { timeout: 10_000 }).toBeGreaterThan(box.width + 30);
      expect((await columnsNow()).find((c) => c.name === 'Note')?.width).toBe(tableWidths.Note);
    });
    await step(s.page, 'column-order', async () => {
      const header = (name: string) => s.page.locator('.grid [role=columnheader] .col-head').filter({ hasText: name });
      const orderNow = async () => {
        const order = (await viewNow('Default View')).column_order ?? [];
        const names = new Map((await columnsNow()).map((c) => [c.key, c.name]));
        return order.map((k) => names.get(k));
      };
      // Stage dropped on Qty: Stage takes Qty's place (left of it).
      await header('Stage').dragTo(header('Qty'));
      await expect.poll(orderNow).toEqual(['Stage', 'Qty', 'Note']);
      await expect.poll(headers).toEqual(['', 'Name', 'Stage', 'Qty', 'Note']);
      // And rightwards: Stage dropped on Note goes after it; then Note onto Qty.
      await header('Stage').dragTo(header('Note'));
      await expect.poll(orderNow).toEqual(['Qty', 'Note', 'Stage']);
      await header('Note').dragTo(header('Qty'));
      await expect.poll(orderNow).toEqual(['Note', 'Qty', 'Stage']);
      await expect.poll(headers).toEqual(['', 'Name', 'Note', 'Qty', 'Stage']);
      // The table's own order is not changed.
      expect((await columnsNow()).map((c) => c.name)).toEqual(['Name', 'Qty', 'Note', 'Stage']);
    });
    await step(s.page, 'column-layout-per-view', async () => {
      // Another view of the table has its own: the table's order and widths until changed there.
      expect((await gw('views/?table_name=Table1', { method: 'POST', body: { name: 'Plain' } })).status).toBe(200);
      await s.page.getByRole('combobox', { name: 'View' }).selectOption('Plain');
      await expect.poll(headers).toEqual(['', 'Name', 'Qty', 'Note', 'Stage']);
      const noteWidth = async () => (await s.page.locator('.grid [role=columnheader]').filter({ hasText: 'Note' }).boundingBox())!.width;
      expect(Math.abs((await noteWidth()) - (tableWidths.Note ?? 160))).toBeLessThan(3);
      await s.page.getByRole('combobox', { name: 'View' }).selectOption('Default View');
      await expect.poll(headers).toEqual(['', 'Name', 'Note', 'Qty', 'Stage']);
      const saved = (await viewNow('Default View')).column_widths![await keyOf('Note')]!;
      await expect.poll(noteWidth).toBeGreaterThan(saved - 3);
      expect((await viewNow('Plain')).column_order).toBeUndefined();
      await s.page.getByRole('combobox', { name: 'View' }).selectOption('Plain');
      await expect.poll(headers).toEqual(['', 'Name', 'Qty', 'Note', 'Stage']);
      await s.page.getByRole('combobox', { name: 'View' }).selectOption('Default View');
    });
  });

  it('the formula builder: function list with help, columns and functions inserted, a live preview of the first rows (and its errors), then the column', async () => {
    await step(s.page, 'formula-builder', async () => {
      await s.page.goto(s.baseUrl);
      await grid().waitFor();
      await s.page.getByRole('button', { name: 'Columns', exact: true }).click();
      const form = s.page.getByRole('form', { name: 'Add column' });
      await form.getByLabel('Column name').fill('Total');
      await form.getByLabel('Column type').selectOption({ label: 'Formula' });
      const functions = form.getByRole('region', { name: 'Functions' });
      // The library with help, filtered by a word of the help.
      await functions.getByRole('group', { name: 'Text' }).waitFor();
      await functions.getByRole('searchbox', { name: 'Find a function' }).fill('upper case');
      await expect.poll(() => functions.getByRole('button').allInnerTexts()).toEqual(['upper']);
      await expect.poll(() => functions.innerText()).toContain('The text in upper case.');
      // Keyboard alone: Tab into the formula box, type; the insert buttons put text at the cursor.
      const box = form.getByLabel('Formula', { exact: true });
      await box.focus();
      await s.page.keyboard.type('{Qty} * ');
      await form.getByRole('button', { name: 'Insert {Qty}' }).click();
      await expect.poll(() => box.inputValue()).toBe('{Qty} * {Qty}');
      const preview = form.getByRole('region', { name: 'Preview of the first rows' });
      await expect.poll(() => preview.innerText()).toContain('Result: number');
      // The first rows by their name, with the value computed by the server.
      await expect.poll(() => preview.locator('tr').allInnerTexts()).toEqual(expect.arrayContaining(['Alpha\t1', 'Beta\t4', 'Gamma\t9']));
      // A broken formula: the server's error with its position, no preview.
      await box.fill('{Qty} * ');
      await expect.poll(() => preview.innerText()).toMatch(/Formula error at position \d+/);
      await box.fill('');
      await functions.getByRole('searchbox', { name: 'Find a function' }).fill('');
      await box.focus();
      await functions.getByRole('button', { name: 'Insert round', exact: true }).click();
      // The cursor is back in the box, after the inserted text.
      await expect.poll(() => box.evaluate((el) => el === document.activeElement)).toBe(true);
      await s.page.keyboard.type('{Qty} / 3, 1)');
      await expect.poll(() => box.inputValue()).toBe('round({Qty} / 3, 1)');
      await expect.poll(() => preview.locator('tr').allInnerTexts()).toEqual(expect.arrayContaining(['Alpha\t0.3', 'Gamma\t1']));
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      expect(await unnamedControls(s.page)).toEqual([]);
      await s.page.screenshot({ path: 'docs/screenshots/formula-builder.png', fullPage: true });
      await form.getByRole('button', { name: 'Add column' }).click();
      await expect.poll(async () => (await byName('Gamma'))?.Total).toBe(1);
      await expect.poll(() => s.page.locator('.grid [role=columnheader]').allInnerTexts()).toContain('Total');
    });
  });
  it('kanban (by a single select; cards moved with the keyboard and by dragging), gallery, calendar (by a date) and a form that adds a row', async () => {
    const now = new Date();
    const day = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-15`;
    expect((await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: 'Due', column_type: 'date', column_data: { format: 'YYYY-MM-DD' } } })).status).toBe(200);
    const priority = { options: [{ name: 'High', color: '#fcc' }, { name: 'Low', color: '#ccf' }] };
    expect((await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: 'Priority', column_type: 'single-select', column_data: priority } })).status).toBe(200);
    const alpha = (await byName('Alpha'))!;
    expect((await gw('rows/', { method: 'PUT', body: { table_name: 'Table1', updates: [{ row_id: alpha._id, row: { Due: day, Stage: 'Todo' } }] } })).status).toBe(200);
    const layout = s.page.getByLabel('Layout', { exact: true });
    await step(s.page, 'kanban', async () => {
      await s.page.reload();
      await grid().waitFor();
      await layout.selectOption({ label: 'Kanban' });
      const board = s.page.getByRole('region', { name: 'Kanban by Stage' });
      await board.waitFor();
      const lane = (name: RegExp) => board.getByRole('region', { name });
      await expect.poll(() => lane(/^Todo/).getByRole('listitem').allInnerTexts()).toEqual(expect.arrayContaining([expect.stringMatching(/^Alpha/), expect.stringMatching(/^Gamma/)]));
      // Keyboard: Alpha from Todo to the next lane, Done.
      await lane(/^Todo/).getByRole('listitem', { name: 'Alpha' }).focus();
      await s.page.keyboard.press('ArrowRight');
      await expect.poll(async () => (await byName('Alpha'))?.Stage).toBe('Done');
      await expect.poll(() => lane(/^Done/).getByRole('listitem', { name: 'Alpha' }).count()).toBe(1);
      // Mouse: Gamma dragged to "No value".
      await lane(/^Todo/).getByRole('listitem', { name: 'Gamma' }).dragTo(lane(/^No value/));
      await expect.poll(async () => (await byName('Gamma'))?.Stage ?? null).toBe(null);
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      expect(await unnamedControls(s.page)).toEqual([]);
      await s.page.screenshot({ path: 'docs/screenshots/kanban.png' });
    });
    await step(s.page, 'layout-on-the-server', async () => {
      // The layout is saved on the server's view, so another browser (no shared localStorage) opens the kanban too.
      const viewNow = async () => (await gw<Meta>('metadata/')).data.metadata.tables[0]!.views[0] as { layout?: unknown };
      await expect.poll(async () => (await viewNow()).layout).toEqual({ type: 'kanban' });
      await s.page.getByLabel('Stack by', { exact: true }).selectOption({ label: 'Priority' });
      await s.page.getByRole('region', { name: 'Kanban by Priority' }).waitFor();
      const priority = (await columnsNow()).find((c) => c.name === 'Priority')!.key;
      await expect.poll(async () => (await viewNow()).layout).toEqual({ type: 'kanban', column_key: priority });
      const other = await s.browser.newContext({ viewport: { width: 1280, height: 800 } });
      try {
        const otherPage = await other.newPage();
        otherPage.setDefaultTimeout(10_000);
        await signIn(otherPage, s.url, ADMIN.email, ADMIN.password);
        await otherPage.goto(s.baseUrl);
        await otherPage.getByRole('region', { name: 'Kanban by Priority' }).waitFor();
        expect(await otherPage.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('basegate.layout.')))).toEqual([]);
      } finally {
        await other.close();
      }
    });
    await step(s.page, 'gallery', async () => {
      await layout.selectOption({ label: 'Gallery' });
      const gallery = s.page.getByRole('list', { name: 'Gallery' });
      await expect.poll(async () => gallery.getByRole('listitem').count()).toBe((await rowsNow()).length);
      await gallery.getByRole('button', { name: 'Open Beta' }).click();
      const dialog = s.page.getByRole('dialog', { name: 'Row “Beta”' });
      await dialog.waitFor();
      await s.page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
    });
    await step(s.page, 'calendar', async () => {
      await layout.selectOption({ label: 'Calendar' });
      const calendar = s.page.getByRole('region', { name: 'Calendar by Due' });
      await expect.poll(() => calendar.locator(`td[data-day="${day}"]`).innerText()).toContain('Alpha');
      await calendar.getByRole('button', { name: 'Next month' }).click();
      await expect.poll(() => calendar.locator(`td[data-day="${day}"]`).count()).toBe(0);
      await calendar.getByRole('button', { name: 'This month' }).click();
      await calendar.locator(`td[data-day="${day}"]`).getByRole('button', { name: 'Alpha' }).click();
      await s.page.getByRole('dialog', { name: 'Row “Alpha”' }).waitFor();
      await s.page.keyboard.press('Escape');
      expect(await seriousAxeViolations(s.page)).toEqual([]);
    });
    await step(s.page, 'form', async () => {
      await layout.selectOption({ label: 'Form' });
      const form = s.page.getByRole('form', { name: 'Add a row' });
      await form.getByLabel('Name', { exact: true }).fill('Epsilon');
      await form.getByLabel('Qty', { exact: true }).fill('7');
      await form.getByLabel('Stage', { exact: true }).selectOption('Done');
      await form.getByLabel('Due', { exact: true }).fill(day);
      await form.getByRole('button', { name: 'Add row' }).click();
      await form.getByRole('status').filter({ hasText: 'Row added (1)' }).waitFor();
      await expect.poll(async () => (await byName('Epsilon')) ?? null).toMatchObject({ Qty: 7, Stage: 'Done', Due: expect.stringMatching(new RegExp(`^${day}`)) });
      // The form is empty again for the next row.
      expect(await form.getByLabel('Name', { exact: true }).inputValue()).toBe('');
      expect(await unnamedControls(s.page)).toEqual([]);
      await layout.selectOption({ label: 'Grid' });
      await grid().waitFor();
    });
  });
});
