import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * Controls of the page that have no accessible name (a person with a screen reader would hear only
 * "button" or "edit text"): buttons, links, inputs, selects and text areas, named by aria-label,
 * aria-labelledby, a <label>, their text, title or placeholder. Returns short descriptions of them.
 */
export function unnamedControls(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const controls = document.querySelectorAll<HTMLElement>('button, a[href], input:not([type=hidden]), select, textarea');
    const unnamed: string[] = [];
    for (const el of controls) {
      const labelled = el.getAttribute('aria-labelledby');
      const named =
        (el.getAttribute('aria-label') ?? '').trim() ||
        (labelled ? labelled.split(/\s+/).map((id) => document.getElementById(id)?.textContent ?? '').join('').trim() : '') ||
        ('labels' in el ? [...((el as HTMLInputElement).labels ?? [])].map((l) => l.textContent ?? '').join('').trim() : '') ||
        (el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement ? '' : (el.textContent ?? '').trim()) ||
        (el.getAttribute('title') ?? '').trim() ||
        (el.getAttribute('placeholder') ?? '').trim();
      if (!named) unnamed.push(el.outerHTML.slice(0, 120));
    }
    return unnamed;
  });
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page as it is now (rule id, impact and the
 * first offending elements). The page's CSP allows no inline scripts, so the engine is evaluated
 * through the DevTools protocol rather than added as a script tag.
 */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  // Once per document: axe keeps itself on window.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)) }));
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.targets.join(', ')}`)
    .filter((v) => !LIBRARY_ISSUES.includes(v));
}

/**
 * Known violations inside react-data-grid 7 (canary 49) that the console cannot change: the grid
 * puts a focusable "focus sink" div among its rows, which axe reports on the grid element.
 */
const LIBRARY_ISSUES = ['aria-required-children (critical): [".rdg"]'];

/**
 * Moves the keyboard focus through the page with Tab (`presses` times, from the start of the page) and
 * returns the focused controls that show no focus: neither an outline nor a box shadow. The grid's own
 * focus target (react-data-grid's "focus sink", a 0×0 element) shows the focus on the selected cell, or
 * on the grid when no cell is selected: that is checked instead. With `here`, the walk starts where the
 * focus is now (an open editor or dialog), and that element is checked first (`presses` 0: only it).
 */
export async function invisibleFocus(page: Page, presses = 25, { here = false }: { here?: boolean } = {}): Promise<string[]> {
  if (!here) await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const invisible = new Set<string>();
  const check = async () => {
    const problem = await page.evaluate(() => {
      let element = document.activeElement as HTMLElement | null;
      if (element == null || element === document.body) return null;
      if (element.classList.contains('rdg-focus-sink')) {
        const grid = element.closest<HTMLElement>('.rdg');
        element = grid?.querySelector<HTMLElement>('[role=gridcell][aria-selected=true]') ?? grid ?? element;
      }
      const style = getComputedStyle(element);
      const outlined = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
      const shadowed = style.boxShadow !== 'none';
      return outlined || shadowed ? null : element.outerHTML.slice(0, 120);
    });
    if (problem) invisible.add(problem);
  };
  if (here) await check();
  for (let i = 0; i < presses; i++) {
    await page.keyboard.press('Tab');
    await check();
  }
  return [...invisible];
}
