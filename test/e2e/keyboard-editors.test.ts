import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSuite, step } from './browser.js';
import { invisibleFocus, seriousAxeViolations } from './accessibility.js';

const BASE = 'Keyboard editors';
type Row = Record<string, unknown>;

/**
 * Issue #29, "every editor works with the keyboard alone": the link, long text, multiple select,
 * duration and rate editors, in the grid and in the expanded row, and the URL, e-mail and file editors
 * in the grid, in headless Chromium against a real
 * server. Each is opened from a selected cell with Enter (or by typing), changed, saved (Enter, or
 * Ctrl+Enter for long text and the pickers) and cancelled with Escape (nothing saved); the focus goes
 * back to the cell (or to the form's "Edit" button) and is visible throughout. What is saved is read
 * back over the API.
 */
describe('console: link, long text, multiple select, duration, rate, URL, e-mail and file editors with the keyboard alone (headless Chromium)', () => {
  const s = new ConsoleSuite(BASE);
  const { gw } = s;
  const columnIndex: Record<string, number> = {};
  const grid = () => s.page.getByRole('grid', { name: 'Rows of Table1' });
  const cell = (column: string) => s.page.locator('.grid [role=row]').filter({ hasText: 'Alpha' }).locator(`[role=gridcell][aria-colindex="${columnIndex[column]}"]`);
  const saved = async (): Promise<Row> => (await gw<{ rows: Row[] }>('rows/?table_name=Table1&convert_keys=true')).data.rows.find((r) => r.Name === 'Alpha')!;
  const links = async () => (((await saved()).Client as Array<{ display_value: string }> | undefined) ?? []).map((l) => l.display_value).sort();
  const press = async (...keys: string[]) => {
    for (const key of keys) await s.page.keyboard.press(key);
  };

  /** Selects the column's cell in Alpha's row with the keyboard: a click on the row's name, then → as often as needed. */
  const selectCell = async (column: string) => {
    await cell('Name').click();
    await expect.poll(() => cell('Name').getAttribute('aria-selected')).toBe('true');
    await expect.poll(() => s.page.evaluate(() => document.activeElement?.classList.contains('rdg-focus-sink') ?? false), { timeout: 10_000 }).toBe(true);
    for (let i = columnIndex.Name!; i < columnIndex[column]!; i++) await s.page.keyboard.press('ArrowRight');
    await expect.poll(() => cell(column).getAttribute('aria-selected')).toBe('true');
  };
  /** The focus is back on the cell (the grid's focus target, with the cell selected) and shows. */
  const focusBackOn = async (column: string) => {
    await expect.poll(() => s.page.evaluate(() => document.activeElement?.classList.contains('rdg-focus-sink') ?? false), { timeout: 10_000 }).toBe(true);
    expect(await cell(column).getAttribute('aria-selected')).toBe('true');
    expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
  };
  /** The element with the focus: its aria-label, or its text. */
  const focused = () => s.page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent?.trim());
  /** Whether the element has the focus. */
  const hasFocus = (element: Locator) => element.evaluate((e) => e === document.activeElement);
  /** A picker's options that are ticked. */
  const ticked = (dialog: Locator) => dialog.locator('[role=option][aria-selected=true]').allInnerTexts().then((t) => t.map((x) => x.replace('✓', '').trim()).sort());

  /** Opens Alpha's expanded row with the keyboard: its checkbox ticked with Space, then "Expand row". */
  const openForm = async () => {
    await selectCell('Name');
    await s.page.keyboard.press('ArrowLeft');
    await expect.poll(() => s.page.evaluate(() => document.activeElement?.classList.contains('row-select') ?? false)).toBe(true);
    await s.page.keyboard.press('Space');
    const expand = s.page.getByRole('button', { name: 'Expand row' });
    await expect.poll(() => expand.isEnabled()).toBe(true);
    await expand.focus();
    await s.page.keyboard.press('Enter');
    const form = s.page.getByRole('dialog', { name: 'Row “Alpha”' });
    await form.waitFor();
    return form;
  };
  const closeForm = async (form: Locator) => {
    await s.page.keyboard.press('Escape');
    await form.waitFor({ state: 'detached' });
    // Back where it was opened from, the "Expand row" button.
    await expect.poll(focused).toBe('Expand row');
    // Alpha's checkbox unticked with the keyboard: no row stays selected for the next test.
    await selectCell('Name');
    await s.page.keyboard.press('ArrowLeft');
    await expect.poll(() => s.page.evaluate(() => document.activeElement?.classList.contains('row-select') ?? false)).toBe(true);
    await s.page.keyboard.press('Space');
    await expect.poll(() => s.page.getByRole('button', { name: 'Expand row' }).isEnabled()).toBe(false);
  };

  beforeAll(async () => {
    await s.start();
    await s.createBase();
    await gw('tables/', { method: 'POST', body: { table_name: 'Clients' } });
    await gw('rows/', { method: 'POST', body: { table_name: 'Clients', rows: [{ Name: 'Acme' }, { Name: 'Globex' }, { Name: 'Initech' }] } });
    const columns: Array<[string, string, Record<string, unknown>]> = [
      ['Notes', 'long-text', {}],
      ['Tags', 'multiple-select', { options: [{ name: 'Red', color: '#fcc' }, { name: 'Green', color: '#cfc' }, { name: 'Blue', color: '#ccf' }] }],
      ['Time', 'duration', { format: 'duration', duration_format: 'h:mm' }],
      ['Stars', 'rate', { rate_max_number: 5 }],
      ['Client', 'link', { table: 'Table1', other_table: 'Clients' }],
      ['Website', 'url', {}],
      ['Mail', 'email', {}],
      ['Attachments', 'file', {}],
    ];
    for (const [name, type, data] of columns) {
      const added = await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: name, column_type: type, column_data: data } });
      expect(added.status).toBe(200);
    }
    const blank = await gw<{ rows: Array<{ _id: string }> }>('rows/?table_name=Table1');
    await gw('rows/', { method: 'DELETE', body: { table_name: 'Table1', row_ids: blank.data.rows.map((r) => r._id) } });
    // Alpha's file cell holds two of the base's files (the dialog offers Download and Remove for each).
    const asset = (name: string, size: number) => ({ name, size, type: 'file', url: `${s.url}/workspace/${s.workspaceId}/asset/${s.baseUuid}/files/2026-01/${name}` });
    const attachments = [asset('notes.txt', 11), asset('old.csv', 8)];
    expect((await gw('rows/', { method: 'POST', body: { table_name: 'Table1', rows: [{ Name: 'Alpha', Attachments: attachments }, { Name: 'Beta' }] } })).status).toBe(200);
    const meta = await gw<{ metadata: { tables: Array<{ name: string; columns: Array<{ name: string }> }> } }>('metadata/');
    // Column 1 is the row selection; the table's columns follow in order.
    meta.data.metadata.tables.find((t) => t.name === 'Table1')!.columns.forEach((c, i) => (columnIndex[c.name] = i + 2));
    await s.openPage({ viewport: { width: 1400, height: 800 } });
    await s.page.goto(s.baseUrl);
    await grid().waitFor();
    await cell('Name').waitFor();
  }, 90_000);

  afterAll(() => s.close());

  it('link: Enter opens the picker; typing filters, arrows move, Enter and Space tick, Ctrl+Enter saves, Escape cancels; the same in the expanded row', async () => {
    await step(s.page, 'keyboard-link', async () => {
      await selectCell('Client');
      await press('Enter');
      const picker = s.page.getByRole('dialog', { name: 'Linked rows of Client' });
      await picker.waitFor();
      await expect.poll(() => picker.getByRole('option').count()).toBe(3);
      expect(await focused()).toBe('Find a row of Clients');
      // Typing filters; Enter ticks the active (first) match.
      await s.page.keyboard.type('glo');
      await expect.poll(() => picker.getByRole('option').count()).toBe(1);
      await press('Enter');
      expect(await ticked(picker)).toEqual(['Globex']);
      await press('Control+A', 'Backspace');
      await expect.poll(() => picker.getByRole('option').count()).toBe(3);
      // Tab moves to the list: End, ↑, ↓ move there and Space ticks.
      await press('Tab');
      expect(await focused()).toBe('Rows of Clients');
      await press('End', 'ArrowUp', 'ArrowDown', 'Space');
      expect(await ticked(picker)).toEqual(['Globex', 'Initech']);
      // The focus stays in the dialog and shows on each of its controls.
      expect(await invisibleFocus(s.page, 5, { here: true })).toEqual([]);
      expect(await picker.evaluate((d) => d.contains(document.activeElement))).toBe(true);
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      await press('Control+Enter');
      await picker.waitFor({ state: 'detached' });
      await expect.poll(links).toEqual(['Globex', 'Initech']);
      await focusBackOn('Client');
      // Escape: the ticks are dropped, nothing is saved.
      await press('Enter');
      await picker.waitFor();
      await expect.poll(() => picker.getByRole('option').count()).toBe(3);
      await press('Enter');
      expect(await ticked(picker)).toEqual(['Acme', 'Globex', 'Initech']);
      await press('Escape');
      await picker.waitFor({ state: 'detached' });
      await focusBackOn('Client');
      expect(await links()).toEqual(['Globex', 'Initech']);
    });
    await step(s.page, 'keyboard-link-form', async () => {
      const form = await openForm();
      await form.getByRole('button', { name: 'Edit Client' }).focus();
      await press('Enter');
      const picker = s.page.getByRole('dialog', { name: 'Linked rows of Client' });
      await picker.waitFor();
      await expect.poll(() => picker.getByRole('option').count()).toBe(3);
      await s.page.keyboard.type('ini');
      await expect.poll(() => picker.getByRole('option').count()).toBe(1);
      await press('Enter', 'Control+Enter');
      await picker.waitFor({ state: 'detached' });
      await expect.poll(links).toEqual(['Globex']);
      // The focus is back on the field's "Edit" button, visibly; the form is still open.
      await expect.poll(focused).toBe('Edit Client');
      expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
      // Escape closes the picker only, saving nothing.
      await press('Enter');
      await picker.waitFor();
      await expect.poll(() => picker.getByRole('option').count()).toBe(3);
      await press('Enter', 'Escape');
      await picker.waitFor({ state: 'detached' });
      await expect.poll(focused).toBe('Edit Client');
      expect(await form.isVisible()).toBe(true);
      expect(await links()).toEqual(['Globex']);
      await closeForm(form);
    });
  });

  it('long text: Enter opens it, Enter makes a new line, Ctrl+Enter saves, Escape cancels; the same in the expanded row', async () => {
    await step(s.page, 'keyboard-long-text', async () => {
      await selectCell('Notes');
      await press('Enter');
      const editor = s.page.getByRole('textbox', { name: 'Edit Notes' });
      await editor.waitFor();
      expect(await editor.inputValue()).toBe('');
      expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
      await s.page.keyboard.type('first line');
      await press('Enter');
      await s.page.keyboard.type('second line');
      await press('Control+Enter');
      await editor.waitFor({ state: 'detached' });
      await expect.poll(async () => (await saved()).Notes).toBe('first line\nsecond line');
      await focusBackOn('Notes');
      // Escape drops what was typed.
      await press('Enter');
      await editor.waitFor();
      expect(await editor.inputValue()).toBe('first line\nsecond line');
      await s.page.keyboard.type(' and more');
      await press('Escape');
      await editor.waitFor({ state: 'detached' });
      await focusBackOn('Notes');
      expect((await saved()).Notes).toBe('first line\nsecond line');
    });
    await step(s.page, 'keyboard-long-text-form', async () => {
      const form = await openForm();
      const field = form.getByRole('textbox', { name: 'Edit Notes' });
      await field.focus();
      expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
      await press('Control+End', 'Enter');
      await s.page.keyboard.type('third line');
      await press('Control+Enter');
      await expect.poll(async () => (await saved()).Notes).toBe('first line\nsecond line\nthird line');
      // Typed, then Escape: the form closes and the text is not saved.
      await s.page.keyboard.type(' unsaved');
      await closeForm(form);
      expect((await saved()).Notes).toBe('first line\nsecond line\nthird line');
    });
  });

  it('multiple select: typing opens the picker filtered, Enter and Space tick, Ctrl+Enter saves in the column’s order, Escape cancels; the same in the expanded row', async () => {
    await step(s.page, 'keyboard-multiple-select', async () => {
      await selectCell('Tags');
      // Typing on the cell opens the picker with the text in its filter.
      await s.page.keyboard.type('gr');
      const picker = s.page.getByRole('dialog', { name: 'Choose Tags' });
      await picker.waitFor();
      await expect.poll(() => picker.getByRole('combobox', { name: 'Find an option of Tags' }).inputValue()).toBe('gr');
      await expect.poll(() => picker.getByRole('option').allInnerTexts()).toEqual(['Green']);
      await press('Enter');
      await press('Control+A', 'Backspace');
      await expect.poll(() => picker.getByRole('option').count()).toBe(3);
      await press('Tab', 'End', 'Space');
      expect(await ticked(picker)).toEqual(['Blue', 'Green']);
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      expect(await invisibleFocus(s.page, 5, { here: true })).toEqual([]);
      await press('Control+Enter');
      await picker.waitFor({ state: 'detached' });
      await expect.poll(async () => (await saved()).Tags).toEqual(['Green', 'Blue']);
      await focusBackOn('Tags');
      // Enter opens it; ↓ and Enter tick, Escape keeps the cell as it was.
      await press('Enter');
      await picker.waitFor();
      await press('ArrowDown', 'ArrowUp', 'Enter');
      expect(await ticked(picker)).toEqual(['Blue', 'Green', 'Red']);
      await press('Escape');
      await picker.waitFor({ state: 'detached' });
      await focusBackOn('Tags');
      expect((await saved()).Tags).toEqual(['Green', 'Blue']);
    });
    await step(s.page, 'keyboard-multiple-select-form', async () => {
      const form = await openForm();
      await form.getByRole('button', { name: 'Edit Tags' }).focus();
      await press('Enter');
      const picker = s.page.getByRole('dialog', { name: 'Choose Tags' });
      await picker.waitFor();
      await s.page.keyboard.type('red');
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      await press('Enter', 'Control+Enter');
      await picker.waitFor({ state: 'detached' });
      await expect.poll(async () => (await saved()).Tags).toEqual(['Red', 'Green', 'Blue']);
      await expect.poll(focused).toBe('Edit Tags');
      expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
      await closeForm(form);
    });
  });

  it('duration: h:mm typed after Enter or straight on the cell, Enter saves, Escape cancels; the same in the expanded row', async () => {
    await step(s.page, 'keyboard-duration', async () => {
      await selectCell('Time');
      await press('Enter');
      const editor = s.page.getByRole('textbox', { name: 'Edit Time' });
      await editor.waitFor();
      expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
      await s.page.keyboard.type('1:30');
      await press('Enter');
      await editor.waitFor({ state: 'detached' });
      await expect.poll(async () => (await saved()).Time).toBe(5400);
      await focusBackOn('Time');
      await expect.poll(() => cell('Time').innerText()).toBe('1:30');
      // Typed straight on the cell: the text replaces the value.
      await s.page.keyboard.type('2:05');
      await editor.waitFor();
      await press('Enter');
      await expect.poll(async () => (await saved()).Time).toBe(7500);
      await focusBackOn('Time');
      await press('Enter');
      await editor.waitFor();
      await s.page.keyboard.type('9:59');
      await press('Escape');
      await editor.waitFor({ state: 'detached' });
      await focusBackOn('Time');
      expect((await saved()).Time).toBe(7500);
    });
    await step(s.page, 'keyboard-duration-form', async () => {
      const form = await openForm();
      await form.getByRole('textbox', { name: 'Edit Time' }).focus();
      await press('Control+A');
      await s.page.keyboard.type('0:45');
      await press('Enter');
      await expect.poll(async () => (await saved()).Time).toBe(2700);
      expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
      await closeForm(form);
    });
  });

  it('rate: a digit typed on the cell or ↑/↓ in its editor (kept within 0…max), Enter saves, Escape cancels; the same in the expanded row', async () => {
    await step(s.page, 'keyboard-rate', async () => {
      await selectCell('Stars');
      await s.page.keyboard.type('4');
      const editor = s.page.getByRole('spinbutton', { name: 'Edit Stars' });
      await editor.waitFor();
      expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
      await press('Enter');
      await expect.poll(async () => (await saved()).Stars).toBe(4);
      await focusBackOn('Stars');
      // ↑ twice stops at the maximum, 5.
      await press('Enter');
      await editor.waitFor();
      await press('ArrowUp', 'ArrowUp', 'Enter');
      await expect.poll(async () => (await saved()).Stars).toBe(5);
      await focusBackOn('Stars');
      await press('Enter');
      await editor.waitFor();
      await press('ArrowDown', 'ArrowDown', 'Enter');
      await expect.poll(async () => (await saved()).Stars).toBe(3);
      await focusBackOn('Stars');
      await s.page.keyboard.type('1');
      await editor.waitFor();
      await press('Escape');
      await editor.waitFor({ state: 'detached' });
      await focusBackOn('Stars');
      expect((await saved()).Stars).toBe(3);
    });
    await step(s.page, 'keyboard-rate-form', async () => {
      const form = await openForm();
      await form.getByRole('spinbutton', { name: 'Edit Stars' }).focus();
      await press('ArrowDown', 'Enter');
      await expect.poll(async () => (await saved()).Stars).toBe(2);
      expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
      await closeForm(form);
    });
  });
  for (const [column, first, second] of [
    ['Website', 'https://example.com/a', 'https://example.org/b'],
    ['Mail', 'ada@example.com', 'grace@example.org'],
  ] as const) {
    it(`${column === 'Website' ? 'URL' : 'e-mail'}: typing or Enter opens the editor, Enter saves, Escape cancels`, async () => {
      await step(s.page, `keyboard-${column === 'Website' ? 'url' : 'email'}`, async () => {
        await selectCell(column);
        // Typed straight on the (empty) cell: the editor opens with the text.
        await s.page.keyboard.type(first);
        const editor = s.page.getByRole('textbox', { name: `Edit ${column}` });
        await editor.waitFor();
        expect(await editor.inputValue()).toBe(first);
        expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
        await press('Enter');
        await editor.waitFor({ state: 'detached' });
        await expect.poll(async () => (await saved())[column]).toBe(first);
        await focusBackOn(column);
        await expect.poll(() => cell(column).innerText()).toBe(first);
        // Enter opens it with the value; a new one typed over it, Enter saves.
        await press('Enter');
        await editor.waitFor();
        expect(await editor.inputValue()).toBe(first);
        await press('Control+A');
        await s.page.keyboard.type(second);
        await press('Enter');
        await editor.waitFor({ state: 'detached' });
        await expect.poll(async () => (await saved())[column]).toBe(second);
        await focusBackOn(column);
        // Escape drops what was typed.
        await press('Enter');
        await editor.waitFor();
        expect(await editor.inputValue()).toBe(second);
        await press('Control+A');
        await s.page.keyboard.type(first);
        await press('Escape');
        await editor.waitFor({ state: 'detached' });
        await focusBackOn(column);
        expect((await saved())[column]).toBe(second);
      });
    });
  }

  it('file: Enter opens the dialog, Tab reaches the file chooser, Download and Remove (and wraps within it), Remove then Save writes the cell, Escape cancels', async () => {
    const files = async () => (((await saved()).Attachments as Array<{ name: string }> | null) ?? []).map((f) => f.name);
    await step(s.page, 'keyboard-file', async () => {
      await selectCell('Attachments');
      await press('Enter');
      const dialog = s.page.getByRole('dialog', { name: 'Files of Attachments' });
      await dialog.waitFor();
      const list = dialog.getByRole('list', { name: 'Files in Attachments' });
      await expect.poll(() => list.getByRole('listitem').count()).toBe(2);
      const chooser = dialog.getByLabel('Add files');
      const button = (name: string) => dialog.getByRole('button', { name });
      // The file chooser has the focus; Tab goes to Save and Cancel, then wraps to the first file's controls.
      await expect.poll(() => hasFocus(chooser)).toBe(true);
      expect(await invisibleFocus(s.page, 0, { here: true })).toEqual([]);
      for (const name of ['Save', 'Cancel', 'Download notes.txt', 'Remove notes.txt', 'Download old.csv', 'Remove old.csv']) {
        await press('Tab');
        await expect.poll(() => hasFocus(button(name)), { message: name, timeout: 5000 }).toBe(true);
      }
      await press('Tab');
      await expect.poll(() => hasFocus(chooser), { timeout: 5000 }).toBe(true);
      // Shift+Tab goes back, and wraps from the first control to the last.
      await press('Shift+Tab');
      await expect.poll(() => hasFocus(button('Remove old.csv')), { timeout: 5000 }).toBe(true);
      // The focus stays in the dialog and shows on each of its controls.
      expect(await invisibleFocus(s.page, 8, { here: true })).toEqual([]);
      expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
      expect(await seriousAxeViolations(s.page)).toEqual([]);
      // Remove old.csv with Enter: the focus stays in the dialog; Shift+Tab, Shift+Tab reach Save.
      await dialog.getByRole('button', { name: 'Remove old.csv' }).focus();
      await press('Enter');
      await expect.poll(() => list.getByRole('listitem').count()).toBe(1);
      expect(await dialog.evaluate((d) => d.contains(document.activeElement))).toBe(true);
      await press('Shift+Tab', 'Shift+Tab');
      expect(await hasFocus(button('Save'))).toBe(true);
      await press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await expect.poll(files).toEqual(['notes.txt']);
      await focusBackOn('Attachments');
      await expect.poll(() => cell('Attachments').innerText()).toBe('notes.txt');
      // Escape: a file chosen with the keyboard (Space on the chooser) and one removed are both dropped.
      await press('Enter');
      await dialog.waitFor();
      await expect.poll(() => hasFocus(chooser)).toBe(true);
      const [fileChooser] = await Promise.all([s.page.waitForEvent('filechooser', { timeout: 20_000 }), press('Space')]);
      await fileChooser.setFiles({ name: 'more.txt', mimeType: 'text/plain', buffer: Buffer.from('more') });
      await expect.poll(() => list.getByRole('listitem').count(), { timeout: 20_000 }).toBe(2);
      await press('Shift+Tab');
      expect(await hasFocus(button('Remove more.txt'))).toBe(true);
      await press('Shift+Tab', 'Shift+Tab');
      expect(await hasFocus(button('Remove notes.txt'))).toBe(true);
      await press('Enter');
      await expect.poll(() => list.getByRole('listitem').count()).toBe(1);
      await press('Escape');
      await dialog.waitFor({ state: 'detached' });
      await focusBackOn('Attachments');
      expect(await files()).toEqual(['notes.txt']);
    });
  });
});
