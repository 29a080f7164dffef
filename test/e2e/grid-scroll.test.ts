import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROW_ORDER_SETTLE_MS } from '../../web/src/grid/row-window.js';
import { ConsoleSuite, step } from './browser.js';

const BASE = 'Grid scroll';
const ROWS = 600;
const name = (i: number) => `Row ${String(i).padStart(4, '0')}`;

/**
 * The grid reuses its row elements while scrolling (web/patches/react-data-grid-row-slots.ts): a far
 * scroll re-renders the same elements with other rows instead of creating new ones, and what an
 * element shows (cells, selection) follows the row, not the element; a reused element does not keep
 * the keyboard focus of the row it showed before. While scrolling, the elements keep their places in the
 * DOM; once the scroll has ended they are put in visual order.
 */
describe('console: the grid reuses row elements while scrolling (headless Chromium)', () => {
  const s = new ConsoleSuite(BASE);
  const { gw } = s;
  const grid = () => s.page.getByRole('grid', { name: 'Rows of Table1' });
  /** The row element showing row i (0-based), by its ARIA index (the header is 1). */
  const rowAt = (i: number) => s.page.locator(`.grid [role=row][aria-rowindex="${i + 2}"]`);
  const scrollTo = (i: number) => grid().evaluate((el, top) => (el.scrollTop = top), i * 34);
  const openGrid = async () => {
    await s.page.goto(s.baseUrl);
    await rowAt(0).waitFor();
  };
  /** Scrolls row `i` to the top and waits until it shows its name. */
  const showRow = async (i: number) => {
    await scrollTo(i);
    await rowAt(i).filter({ hasText: name(i) }).waitFor();
  };
  /** Shows row `i`, then waits for the settle: the rows in the DOM in visual order. */
  const settleAt = async (i: number) => {
    await showRow(i);
    await expect.poll(async () => sorted(await domOrder()), { timeout: 10_000 }).toBe(true);
  };
  const backToTop = () => showRow(0);
  /** The ARIA row indexes of the rendered rows in DOM order. */
  const domOrder = () => s.page.evaluate(() => [...document.querySelectorAll('.grid > [role=row]:not(.rdg-header-row)')].map((row) => Number(row.getAttribute('aria-rowindex'))));
  const sorted = (indexes: number[]) => indexes.every((index, i) => i === 0 || indexes[i - 1]! < index);
  /** Every rendered row (header left out): its index, its Name cell, whether it is selected and checked. */
  const shownRows = () =>
    s.page.evaluate(() =>
      [...document.querySelectorAll('.grid > [role=row]:not(.rdg-header-row)')].map((row) => ({
        index: Number(row.getAttribute('aria-rowindex')) - 2,
        name: row.querySelector('[aria-colindex="2"]')?.textContent ?? '',
        selected: row.getAttribute('aria-selected') === 'true',
        checked: (row.querySelector('input.row-select') as HTMLInputElement | null)?.checked ?? false,
      })),
    );

  /**
   * Fault injection: a request from the page to /__test/stall-frames?ms=N (answered here, never by the server)
   * stops the browser's GPU process for N ms. That process paces the page's frames (it composites with
   * --disable-gpu too): the page's main thread runs on and its timers fire, but no frame comes, as when a
   * loaded machine leaves the compositor waiting.
   */
  const stallFramesOnRequest = async () => {
    const cdp = await s.browser.newBrowserCDPSession();
    const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: Array<{ type: string; id: number }> };
    await cdp.detach();
    const gpu = processInfo.find((p) => p.type === 'GPU')?.id;
    if (gpu == null) throw new Error('the browser has no GPU process to stop');
    await s.page.route((url) => url.pathname === '/__test/stall-frames', async (route) => {
      process.kill(gpu, 'SIGSTOP');
      setTimeout(() => process.kill(gpu, 'SIGCONT'), Number(new URL(route.request().url()).searchParams.get('ms')));
      await route.fulfill({ status: 204 });
    });
  };

  beforeAll(async () => {
    await s.start();
    await s.createBase();
    const blank = (await gw<{ rows: Array<{ _id: string }> }>('rows/?table_name=Table1')).data.rows;
    await gw('rows/', { method: 'DELETE', body: { table_name: 'Table1', row_ids: blank.map((r) => r._id) } });
    for (const [column, type, data] of [
      ['Done', 'checkbox'],
      ['Status', 'single-select', { options: [{ name: 'Todo', color: '#eee' }, { name: 'Ready', color: '#cfc' }] }],
      ['Due', 'date', { format: 'YYYY-MM-DD' }],
      ['Owner', 'collaborator'],
    ] as Array<[string, string, Record<string, unknown>?]>) {
      const added = await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: column, column_type: type, ...(data ? { column_data: data } : {}) } });
      expect(added.status).toBe(200);
    }
    const rows = Array.from({ length: ROWS }, (_, i) => ({ Name: name(i) }));
    expect((await gw('rows/', { method: 'POST', body: { table_name: 'Table1', rows } })).status).toBe(200);
    await s.openPage({ viewport: { width: 1280, height: 800 } });
  }, 90_000);

  afterAll(() => s.close());

  it('a far scroll shows other rows in the same elements; cells and selection follow the rows', async () => {
    await step(s.page, 'grid-scroll-reuse', async () => {
      await openGrid();
      await rowAt(1).getByRole('checkbox', { name: 'Select' }).check();
      await expect.poll(async () => rowAt(1).getAttribute('aria-selected')).toBe('true');
      const before = await s.page.evaluate(() => {
        const rows = [...document.querySelectorAll('.grid > [role=row]:not(.rdg-header-row)')];
        (window as unknown as { shownBefore: Element[] }).shownBefore = rows;
        return rows.length;
      });
      expect(before).toBeGreaterThan(10);

      const shownElements = () => s.page.evaluate(() => document.querySelectorAll('.grid > [role=row]:not(.rdg-header-row)').length);
      const sameElements = () =>
        s.page.evaluate(() => {
          const old = (window as unknown as { shownBefore: Element[] }).shownBefore;
          const now = new Set(document.querySelectorAll('.grid > [role=row]:not(.rdg-header-row)'));
          return { connected: old.filter((e) => e.isConnected).length, kept: old.filter((e) => now.has(e)).length, now: now.size };
        });
      await showRow(200);
      // The window at the top is cut short; in mid-table it has its full size. Every element is still there.
      const full = await shownElements();
      expect(await sameElements()).toEqual({ connected: before, kept: before, now: full });
      await s.page.evaluate(() => {
        (window as unknown as { shownBefore: Element[] }).shownBefore = [...document.querySelectorAll('.grid > [role=row]:not(.rdg-header-row)')];
      });
      // From there a far scroll to a window of the same size (the grid renders rows in batches of 8, from
      // 4 rows before the first shown: 200 and 400 are aligned alike) creates and drops no element.
      await showRow(400);
      expect(await sameElements()).toEqual({ connected: full, kept: full, now: full });
      // A position whose own window is smaller (aligned otherwise) keeps every element too: the rows
      // past its end are rendered rather than their elements dropped and made again later.
      await showRow(150);
      expect(await sameElements()).toEqual({ connected: full, kept: full, now: full });
      await showRow(400);
      const far = await shownRows();
      expect(far.every((r) => r.index >= 380 && r.name === `Row ${String(r.index).padStart(4, '0')}`)).toBe(true);
      // The selected row (1) is out of view: no element that showed it still says so.
      expect(far.filter((r) => r.selected || r.checked)).toEqual([]);

      await backToTop();
      const back = await shownRows();
      expect(back.every((r) => r.name === name(r.index))).toBe(true);
      expect(back.filter((r) => r.selected || r.checked).map((r) => r.index)).toEqual([1]);
      await rowAt(1).getByRole('checkbox', { name: 'Select' }).uncheck();
      await expect.poll(async () => (await shownRows()).filter((r) => r.selected).length).toBe(0);
    });
  });

  it('once a scroll has ended, the rows are in the DOM in visual order, in the same elements', async () => {
    await step(s.page, 'grid-scroll-order', async () => {
      await openGrid();
      await settleAt(200);
      await s.page.evaluate(() => {
        (window as unknown as { shownBefore: Element[] }).shownBefore = [...document.querySelectorAll('.grid > [role=row]:not(.rdg-header-row)')];
      });
      // A far scroll, which reuses every element, then ten rows down: the rows still in view keep their
      // elements and places, the entering ones take the elements of the rows that left, first in the DOM
      // (without the reordering, the DOM order stays so).
      await showRow(440);
      await showRow(450);
      // After the pause the DOM order is the visual order (aria-rowindex ascending), in the elements there were.
      await expect.poll(async () => sorted(await domOrder()), { timeout: 10_000 }).toBe(true);
      const order = await domOrder();
      expect(order).toContain(450 + 2);
      expect(order.every((index) => index >= 440 && index <= 500)).toBe(true);
      const kept = await s.page.evaluate(() => {
        const old = (window as unknown as { shownBefore: Element[] }).shownBefore;
        const now = [...document.querySelectorAll('.grid > [role=row]:not(.rdg-header-row)')];
        return { old: old.length, now: now.length, kept: now.filter((e) => old.includes(e)).length };
      });
      // No element was dropped and made again: every element still rendered is one that was there (a window
      // that came out larger under load, rows overscanned while the scroll was still moving, adds elements
      // once; seen in 1 CI run: 26 against 20), and every one that was there is still rendered if it fits.
      expect(kept.kept).toBe(Math.min(kept.old, kept.now));
      expect(kept.now).toBeGreaterThanOrEqual(kept.old - 8);
      const shown = await shownRows();
      expect(shown.every((r) => r.name === name(r.index))).toBe(true);
      await backToTop();
    });
  });

  it('an open editor in a row that the settle would move keeps its focus and text; its row is put in order once it closes', async () => {
    await step(s.page, 'grid-scroll-editor-order', async () => {
      await openGrid();
      await settleAt(450);
      // An editor on row 452, text typed, not saved.
      await rowAt(452).locator('[aria-colindex="2"]').dblclick();
      const editor = rowAt(452).locator('[aria-colindex="2"] input');
      await editor.fill('Edited 452');
      // Every time the editor loses the focus is counted: moving its row's element takes the focus away (React
      // gives it back after its commit, but the editor has seen a blur, which closes a picker or commits an edit).
      await s.page.evaluate(() => {
        const w = window as unknown as { editor: Element | null; blurs: number };
        w.editor = document.activeElement;
        w.blurs = 0;
        w.editor?.addEventListener('blur', () => w.blurs++);
      });
      // Ten rows up: the entering rows take the elements of the rows that left, last in the DOM; in visual
      // order they come first, so putting the rows in order would move the other rows' elements, row 452's too.
      await showRow(445);
      await showRow(440);
      const focus = () =>
        s.page.evaluate(() => {
          const active = document.activeElement as HTMLInputElement | null;
          const w = window as unknown as { editor: Element | null; blurs: number };
          return { same: active === w.editor, blurs: w.blurs, row: active?.closest('[role=row]')?.getAttribute('aria-rowindex') ?? null, value: active?.value ?? null };
        });
      // Well past the end of the scroll (the order settles 150 ms after it): the editor kept its focus and text,
      // and the rows wait in their places.
      await s.page.waitForTimeout(600);
      expect(await focus()).toEqual({ same: true, blurs: 0, row: String(452 + 2), value: 'Edited 452' });
      expect(sorted(await domOrder())).toBe(false);
      // Saved with Enter: the text is the row's, and the rows are put in visual order.
      await s.page.keyboard.press('Enter');
      await editor.waitFor({ state: 'detached' });
      await expect.poll(() => rowAt(452).locator('[aria-colindex="2"]').innerText()).toBe('Edited 452');
      await expect.poll(async () => sorted(await domOrder()), { timeout: 10_000 }).toBe(true);
      const saved = async () => (await gw<{ rows: Array<{ _id: string; Name: string }> }>('rows/?table_name=Table1&convert_keys=true&start=452&limit=1')).data.rows[0];
      await expect.poll(async () => (await saved())?.Name).toBe('Edited 452');
      // The row's name back, for the other cases.
      const row = (await saved())!;
      expect((await gw('rows/', { method: 'PUT', body: { table_name: 'Table1', updates: [{ row_id: row._id, row: { Name: name(452) } }] } })).status).toBe(200);
      await expect.poll(() => rowAt(452).locator('[aria-colindex="2"]').innerText()).toBe(name(452));
      await backToTop();
    });
  });

  it('a focused checkbox, select, date or collaborator editor in a row the settle would move keeps its focus and value; the rows are put in order once the focus leaves', async () => {
    await step(s.page, 'grid-scroll-editors-order', async () => {
      const cell = (column: number) => rowAt(452).locator(`[aria-colindex="${column}"]`);
      /** Remembers the focused element and counts its blurs (moving its row's element would blur it). */
      const watchFocus = () =>
        s.page.evaluate(() => {
          const w = window as unknown as { held: Element | null; blurs: number };
          w.held = document.activeElement;
          w.blurs = 0;
          w.held?.addEventListener('blur', () => w.blurs++);
          return w.held?.tagName ?? null;
        });
      const held = () =>
        s.page.evaluate(() => {
          const w = window as unknown as { held: Element | null; blurs: number };
          const active = document.activeElement as HTMLInputElement | null;
          return { same: active === w.held, blurs: w.blurs, value: active?.type === 'checkbox' ? String(active.checked) : (active?.value ?? null) };
        });
      /** Ten rows up twice (the entering rows take elements last in the DOM), then well past the settle. */
      const scrollAndWait = async () => {
        await showRow(445);
        await showRow(440);
        await s.page.waitForTimeout(600);
      };
      const saved = async () => (await gw<{ rows: Array<Record<string, unknown>> }>('rows/?table_name=Table1&convert_keys=true&start=452&limit=1')).data.rows[0]!;

      // A checkbox cell, selected with the mouse beside its box: the box takes the focus, unticked.
      await openGrid();
      await settleAt(450);
      await cell(3).click({ position: { x: 2, y: 2 } });
      expect(await watchFocus()).toBe('INPUT');
      expect(await held()).toEqual({ same: true, blurs: 0, value: 'false' });
      await scrollAndWait();
      expect(await held()).toEqual({ same: true, blurs: 0, value: 'false' });
      expect(sorted(await domOrder())).toBe(false);
      // Space still ticks this row's box (not another row's), once.
      await s.page.keyboard.press('Space');
      await expect.poll(async () => (await saved()).Done).toBe(true);
      expect(await held()).toEqual({ same: true, blurs: 0, value: 'true' });
      // The focus leaves the row (the next cell is selected, the grid keeps the keyboard): the rows are put in order.
      await s.page.keyboard.press('ArrowRight');
      await expect.poll(() => s.page.evaluate(() => document.activeElement?.closest('[role=row]') == null)).toBe(true);
      await expect.poll(async () => sorted(await domOrder()), { timeout: 10_000 }).toBe(true);

      // A single select's editor (opened with a double click: Enter would open its list too).
      await settleAt(450);
      await cell(4).dblclick();
      await cell(4).locator('select').waitFor();
      expect(await watchFocus()).toBe('SELECT');
      await scrollAndWait();
      expect(await held()).toEqual({ same: true, blurs: 0, value: '' });
      expect(sorted(await domOrder())).toBe(false);
      await s.page.keyboard.press('Escape');
      await cell(4).locator('select').waitFor({ state: 'detached' });
      await expect.poll(async () => sorted(await domOrder()), { timeout: 10_000 }).toBe(true);

      // A date's editor with a date typed, not saved: kept through the settle, saved with Enter.
      await settleAt(450);
      await cell(5).click();
      await s.page.keyboard.press('Enter');
      const date = cell(5).locator('input[type=date]');
      await date.fill('2027-01-02');
      expect(await watchFocus()).toBe('INPUT');
      await scrollAndWait();
      expect(await held()).toEqual({ same: true, blurs: 0, value: '2027-01-02' });
      expect(sorted(await domOrder())).toBe(false);
      await s.page.keyboard.press('Enter');
      await date.waitFor({ state: 'detached' });
      await expect.poll(async () => (await saved()).Due).toMatch(/^2027-01-02/);
      await expect.poll(async () => sorted(await domOrder()), { timeout: 10_000 }).toBe(true);

      // The collaborator picker (a dialog outside the grid) with a filter typed: the settle moves rows, not the dialog.
      await settleAt(450);
      await cell(6).click();
      await s.page.keyboard.press('Enter');
      const picker = s.page.getByRole('dialog', { name: 'Choose Owner' });
      await picker.waitFor();
      await s.page.keyboard.type('adm');
      expect(await watchFocus()).toBe('INPUT');
      await scrollAndWait();
      expect(await held()).toEqual({ same: true, blurs: 0, value: 'adm' });
      await s.page.keyboard.press('Escape');
      await picker.waitFor({ state: 'detached' });
      await expect.poll(async () => sorted(await domOrder()), { timeout: 10_000 }).toBe(true);

      // The row as it was, for the other cases.
      const row = await saved();
      expect((await gw('rows/', { method: 'PUT', body: { table_name: 'Table1', updates: [{ row_id: row._id, row: { Done: false, Due: null } }] } })).status).toBe(200);
      await backToTop();
    });
  });

  it('keyboard alone: a checkbox, a single select, a date and a collaborator cell are edited from the arrows, Space, Enter and typing', async () => {
    await step(s.page, 'grid-keyboard-editors', async () => {
      await openGrid();
      const saved = async () => (await gw<{ rows: Array<Record<string, unknown>> }>('rows/?table_name=Table1&convert_keys=true&start=3&limit=1')).data.rows[0]!;
      const editor = (column: number) => rowAt(3).locator(`[aria-colindex="${column}"]`).locator('input, select');
      /** Waits until the cell is selected and has the keyboard: on a loaded machine both come a little after the key or click. */
      const selected = async (column: number) => {
        await expect.poll(() => rowAt(3).locator(`[aria-colindex="${column}"]`).getAttribute('aria-selected'), { timeout: 10_000 }).toBe('true');
        // The grid's focus target, or the cell's own control (the checkbox), has the keyboard.
        await expect
          .poll(() => s.page.evaluate(() => !!document.activeElement && (document.activeElement.classList.contains('rdg-focus-sink') || !!document.activeElement.closest('[role=gridcell][aria-selected=true]'))), { timeout: 10_000 })
          .toBe(true);
      };
      await rowAt(3).locator('[aria-colindex="2"]').click();
      await selected(2);
      // The checkbox: Space ticks it.
      await s.page.keyboard.press('ArrowRight');
      await selected(3);
      await s.page.keyboard.press('Space');
      await expect.poll(async () => (await saved()).Done, { timeout: 10_000 }).toBe(true);
      // The single select: Enter opens it, the arrow picks the first option, Enter saves.
      await s.page.keyboard.press('ArrowRight');
      await selected(4);
      await s.page.keyboard.press('Enter');
      await editor(4).waitFor();
      await s.page.keyboard.press('ArrowDown');
      await s.page.keyboard.press('Enter');
      await expect.poll(async () => (await saved()).Status, { timeout: 10_000 }).toBe('Todo');
      await editor(4).waitFor({ state: 'detached' });
      // The date: Enter opens it, the date typed (month, day, year in this browser's locale), Enter saves.
      await selected(4);
      await s.page.keyboard.press('ArrowRight');
      await selected(5);
      await s.page.keyboard.press('Enter');
      await editor(5).waitFor();
      await s.page.keyboard.type('03042027');
      await s.page.keyboard.press('Enter');
      await expect.poll(async () => (await saved()).Due, { timeout: 10_000 }).toMatch(/^2027-03-04/);
      await editor(5).waitFor({ state: 'detached' });
      await selected(5);
      // The collaborator: Enter opens the picker, typing filters, Enter ticks, Ctrl+Enter saves.
      await s.page.keyboard.press('ArrowRight');
      await selected(6);
      await s.page.keyboard.press('Enter');
      const picker = s.page.getByRole('dialog', { name: 'Choose Owner' });
      await picker.waitFor();
      await s.page.keyboard.type('admin');
      await s.page.keyboard.press('Enter');
      await s.page.keyboard.press('Control+Enter');
      await picker.waitFor({ state: 'detached' });
      await expect.poll(async () => ((await saved()).Owner as unknown[] | undefined)?.length ?? 0).toBe(1);
      const row = await saved();
      expect((await gw('rows/', { method: 'PUT', body: { table_name: 'Table1', updates: [{ row_id: row._id, row: { Done: false, Status: null, Due: null, Owner: [] } }] } })).status).toBe(200);
    });
  });

  it('fast flings in both directions never show a visible row without its content; a fling that starts faster than the rows rendered reach misses rows on its first frame only', async () => {
    await step(s.page, 'grid-scroll-fling', async () => {
      await stallFramesOnRequest();
      await openGrid();
      // The page samples every frame: at points down the Name column of the visible rows, the element
      // there must be the row scrolled to that place, with its name. The sample is taken after the
      // frame's scroll position moved and before the grid could render for it: the grid renders at the
      // scroll event, which comes a frame later, as the browser's compositor scrolls a frame (or more)
      // ahead of the page. So the rows rendered must reach as far as the next frame can scroll.
      const blanks = await s.page.evaluate(async (stall) => {
        const grid = document.querySelector('.grid') as HTMLElement;
        const header = grid.querySelector('.rdg-header-row')!.getBoundingClientRect().height;
        const nameHeader = grid.querySelector('.rdg-header-row [aria-colindex="2"]')!.getBoundingClientRect();
        const x = nameHeader.left + nameHeader.width / 2;
        const missed: string[] = [];
        let frames = 0;
        /** Rows missing on a fling's first frame (before any scroll event told the grid its speed). */
        let firstFrameMissed = 0;
        /** `firstFrame`: the first frame of a fling, before any scroll event told the grid its speed. */
        const sample = (firstFrame = false) => {
          frames++;
          // The rows' area: below the grid's border and its header, above the horizontal scrollbar;
          // each visible row is looked at in the middle of what shows of it.
          const top = grid.getBoundingClientRect().top + grid.clientTop + header;
          const bottom = top - header + grid.clientHeight;
          for (let row = Math.floor(grid.scrollTop / 34); top + row * 34 - grid.scrollTop < bottom - 4; row++) {
            const rowTop = top + row * 34 - grid.scrollTop;
            if (rowTop + 34 < top + 4) continue; // a sliver: its middle is on the border
            const y = (Math.max(top, rowTop) + Math.min(bottom, rowTop + 34)) / 2;
            const element = document.elementFromPoint(x, y)?.closest('[role=row]');
            const name = element?.querySelector('[aria-colindex="2"]')?.textContent ?? '';
            if (firstFrame && element == null) {
              // Known limit: no row is rendered there yet (the grid learns the speed at the first scroll event).
              firstFrameMissed++;
              continue;
            }
            if (element?.getAttribute('aria-rowindex') !== String(row + 2) || name !== `Row ${String(row).padStart(4, '0')}`) {
              missed.push(`frame ${frames}, top ${grid.scrollTop}: row ${row} shows ${element ? `row ${Number(element.getAttribute('aria-rowindex')) - 2} "${name}"` : 'nothing'}`);
            }
          }
        };
        const frame = () => new Promise<void>((resolve) => requestAnimationFrame(() => resolve()));
        /** The longest gap between two frames of a fling in the three after the frames were stopped (ms). */
        let stalledFor = 0;
        /**
         * A fling: the speed grows by half each frame from `start` up to `peak` px, holds, then decays as a fling does.
         * `stallAfter`: the step after which the page gets no frame for `stall` ms (as on a loaded machine).
         */
        const fling = async (direction: number, peak: number, start = 20, stallAfter = -1) => {
          let speed = start;
          const steps: number[] = [];
          while (speed < peak) steps.push(speed), (speed = Math.min(peak, speed * 1.5));
          for (let i = 0; i < 8; i++) steps.push(peak);
          for (let v = peak; v > 4; v *= 0.85) steps.push(v);
          let last = 0;
          for (const [i, v] of steps.entries()) {
            await new Promise<void>((resolve) =>
              requestAnimationFrame(() => {
                // The stop may let a frame already on its way through: the gap is one of the next three.
                if (stallAfter >= 0 && i > stallAfter && i <= stallAfter + 3) stalledFor = Math.max(stalledFor, performance.now() - last);
                last = performance.now();
                grid.scrollTop += direction * Math.round(v);
                sample(i === 0);
                if (i === stallAfter) {
                  // Answered once the frames have stopped (a synchronous request: no frame comes in between).
                  const request = new XMLHttpRequest();
                  request.open('POST', `/__test/stall-frames?ms=${stall}`, false);
                  request.send();
                }
                resolve();
              }),
            );
          }
        };
        await fling(1, 300);
        // The frames stop for longer than the settle while a fling speeds up (after its 5th, 6th or 7th step:
        // 101, 152 or 228 px, each next one half as far again): the page runs on, and the timer that ends a
        // scroll comes before the frame whose scroll event carries the fling on. The scroll has not ended:
        // the frames after are covered (they were not: the rows rendered shrank and the speed was forgotten).
        await fling(1, 300, 20, 4);
        await fling(-1, 300);
        await fling(1, 200);
        // A pause: the scroll ends (the rows rendered shrink back), then flings the other way.
        await new Promise((resolve) => setTimeout(resolve, 400));
        await fling(-1, 300);
        await fling(1, 120);
        await fling(-1, 250);
        // From rest, at once faster than the rows rendered reach (4 rows ahead; 12 rows of the 14 shown):
        // the first frame comes before the first scroll event, so the rows it brings into view are not
        // rendered yet (blank; a placeholder background for them doubled the cost of a scrolling frame, see
        // docs/console.md); every later frame is complete, the first move taken as the fling's speed.
        const pause = () => new Promise((resolve) => setTimeout(resolve, 400));
        await pause();
        const before = firstFrameMissed;
        await fling(1, 400, 400);
        const firstFrameDown = firstFrameMissed - before;
        await pause();
        await fling(-1, 400, 400);
        for (let i = 0; i < 5; i++) await frame();
        sample();
        return { frames, missed: missed.slice(0, 10), count: missed.length, firstFrameDown, firstFrameMissed, stalledFor };
      }, ROW_ORDER_SETTLE_MS + 100);
      expect(blanks.frames).toBeGreaterThan(100);
      // The fast starts did outrun the rows rendered on their first frame, both ways (so the frames after it
      // were covered by the first move taken as the speed, not by a window that was big enough anyway).
      expect(blanks.firstFrameDown).toBeGreaterThan(0);
      expect(blanks.firstFrameMissed).toBeGreaterThan(blanks.firstFrameDown);
      // The stall outlasted the settle (so the scroll could have been taken for ended).
      expect(blanks.stalledFor).toBeGreaterThan(ROW_ORDER_SETTLE_MS);
      expect(blanks).toEqual({ ...blanks, missed: [], count: 0 });
      await backToTop();
    });
  }, 90_000);

  it('the focus of a row scrolled away does not stay in the element that now shows another row', async () => {
    await step(s.page, 'grid-scroll-focus', async () => {
      // A fresh page: the earlier cases leave a selected cell and rows that the settle may still move, and a
      // click while the settle moves its row's element can lose the focus (seen in 1 CI run in 4, the poll waiting 10 s).
      await s.page.reload();
      await openGrid();
      // The selection column's cell of row 2, selected with the mouse beside its checkbox: the checkbox takes the focus.
      await rowAt(2).locator('[aria-colindex="1"]').click({ position: { x: 2, y: 2 } });
      const focusedRow = () => s.page.evaluate(() => document.activeElement?.closest('[role=row]')?.getAttribute('aria-rowindex') ?? null);
      await expect.poll(focusedRow, { timeout: 10_000 }).toBe('4');
      expect(await s.page.evaluate(() => document.activeElement?.matches('input.row-select') ?? false)).toBe(true);
      await s.page.keyboard.press('Space');
      await expect.poll(async () => rowAt(2).getAttribute('aria-selected')).toBe('true');

      await showRow(400);
      // The element that held row 2's checkbox shows another row now, and no longer has the focus
      // (the page has it, as when the grid dropped the row's element); the grid stays where it was scrolled.
      await expect.poll(focusedRow).toBe(null);
      expect(await s.page.evaluate(() => document.activeElement === document.body)).toBe(true);
      expect(await rowAt(400).isVisible()).toBe(true);
      // So Space ticks no other row (with the focus kept, it ticked the row the element shows now).
      await s.page.keyboard.press('Space');
      expect((await shownRows()).filter((r) => r.selected || r.checked)).toEqual([]);
      // Space on the page scrolls the grid by a page, smoothly: let it end before scrolling back.
      const scrollTop = () => grid().evaluate((el) => el.scrollTop);
      await expect.poll(async () => (await scrollTop()) === (await s.page.waitForTimeout(300), await scrollTop())).toBe(true);
      // Back at the top: row 2 is still the one selected row, and a click brings the keyboard back.
      await backToTop();
      expect((await shownRows()).filter((r) => r.selected || r.checked).map((r) => r.index)).toEqual([2]);
      await rowAt(3).locator('[aria-colindex="1"]').click({ position: { x: 2, y: 2 } });
      // The checkbox takes the focus in a layout effect after the click's render: give a loaded machine time.
      await expect.poll(focusedRow, { timeout: 10_000 }).toBe('5');
      await s.page.keyboard.press('ArrowDown');
      await expect.poll(focusedRow, { timeout: 10_000 }).toBe('6');
    });
  });
});
