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
