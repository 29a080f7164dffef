import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { ADMIN, apiCaller, adminSignIn, closeConsole, createBase, launchBrowser, newConsolePage, startConsoleServer, step } from './browser.js';
import { seriousAxeViolations } from './accessibility.js';

// The console's catalogues, by path at run time: the server's tsc does not type-check web/ (see test/web/catalogue.test.ts).
const I18N = path.resolve(import.meta.dirname, '../../web/src/i18n');
const { messages: en } = (await import(/* @vite-ignore */ path.join(I18N, 'en.ts'))) as { messages: Record<string, string> };
const { pseudo } = (await import(/* @vite-ignore */ path.join(I18N, 'qps-ploc.ts'))) as { pseudo: (text: string) => string };
/** A key's English text; and the same text as the pseudo-locale shows it. */
function englishText(key: string): string {
  const text = en[key];
  if (text === undefined) throw new Error(`no catalogue key ${key}`);
  return text;
}
const shown = (key: string) => pseudo(englishText(key));

/** A base name without English in it, so that any English the page shows is the console's own. */
const BASE = 'Q4 № 7';
/** What the page shows that is data, not the console's text: the user (their address, internal id and name), and what the server names a new base's parts. */
const DATA = [ADMIN.email, /\b[0-9a-f]{32}@auth\.local\b/g, /\badmin\b/g, 'Table1', 'Default View', 'Name'];

/** Every text a person sees or hears on the page: visible text nodes, and spoken and shown attributes. */
const shownTexts = (page: Page) =>
  page.evaluate(() => {
    const texts: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      // Code samples (curl, Python) are code, not text to translate.
      if (!parent || parent.closest('script, style, pre, code') || !parent.checkVisibility()) continue;
      if (node.textContent?.trim()) texts.push(node.textContent.trim());
    }
    for (const el of document.body.querySelectorAll('[aria-label], [title], [placeholder], [alt]'))
      for (const name of ['aria-label', 'title', 'placeholder', 'alt']) {
        const value = el.getAttribute(name);
        if (value?.trim()) texts.push(value.trim());
      }
    return texts;
  });

/** Texts with English left in them: three Latin letters in a row outside the pseudo-locale's ⟦brackets⟧ and the data. */
function english(texts: string[]): string[] {
  return texts.filter((text) => {
    let rest = text.replace(/⟦[^⟧]*⟧/g, ' ');
    for (const data of DATA) rest = typeof data === 'string' ? rest.split(data).join(' ') : rest.replace(data, ' ');
    return /[A-Za-z]{3,}/.test(rest);
  });
}

/**
 * The console in a browser set to the pseudo-locale (issue #29): every main page shows its texts from
 * the `qps-ploc` catalogue (accented, in ⟦brackets⟧), so no English literal is left on them, and a
 * server error is shown translated while the API still answers it in English.
 */
describe('console in the pseudo-locale (headless Chromium)', () => {
  let server: RunningServer;
  let url: string;
  let browser: Browser;
  let page: Page;
  let workspaceId: number;

  beforeAll(async () => {
    ({ server, url } = await startConsoleServer());
    const token = await adminSignIn(url);
    ({ workspaceId } = await createBase(apiCaller(() => url, () => token), BASE));
    browser = await launchBrowser();
    page = await newConsolePage(browser, { viewport: { width: 1280, height: 800 }, locale: 'qps-ploc' });
  }, 60_000);

  afterAll(() => closeConsole(browser, server));

  it('the browser asks for the pseudo-locale and the sign-in page is in it', async () => {
    await page.goto(url);
    expect(await page.evaluate(() => navigator.languages[0])).toBe('qps-ploc');
    await page.getByRole('button', { name: shown('login.submit') }).waitFor();
    expect(english(await shownTexts(page))).toEqual([]);
  });

  it("a wrong password: the server's English message is shown in the page's language", async () => {
    await step(page, 'pseudo-wrong-password', async () => {
      await page.getByLabel(shown('login.email')).fill(ADMIN.email);
      await page.getByLabel(shown('login.password')).fill('not-the-password');
      await page.getByRole('button', { name: shown('login.submit') }).click();
      await expect.poll(() => page.getByRole('alert').innerText()).toBe(shown('serverError.signInFailed'));
    });
    // …while the API itself still answers in English, as the contract says.
    const res = await fetch(`${url}/api2/auth-token/`, { method: 'POST', headers: { 'content-type': 'application/json', 'accept-language': 'qps-ploc' }, body: JSON.stringify({ username: ADMIN.email, password: 'not-the-password' }) });
    expect(JSON.stringify(await res.json())).toContain(englishText('serverError.signInFailed'));
  });

  it('signed in, the main pages have no English left', async () => {
    await step(page, 'pseudo-sign-in', async () => {
      await page.getByLabel(shown('login.password')).fill(ADMIN.password);
      await page.getByRole('button', { name: shown('login.submit') }).click();
      await page.getByRole('button', { name: shown('session.signOut') }).waitFor();
    });
    const base = `#/base/${workspaceId}/${encodeURIComponent(BASE)}`;
    const pages: Array<{ hash: string; ready: () => Promise<unknown> }> = [
      { hash: '#/', ready: () => page.getByRole('link', { name: BASE }).first().waitFor() },
      { hash: base, ready: () => page.locator('.grid [role=row][aria-rowindex="2"]').waitFor() },
      { hash: `${base}/share`, ready: () => page.locator('main h1, main h2').first().waitFor() },
      { hash: `${base}/integrations`, ready: () => page.locator('main h1, main h2').first().waitFor() },
      { hash: '#/groups', ready: () => page.locator('main h1').first().waitFor() },
      { hash: '#/inbox', ready: () => page.locator('main h1').first().waitFor() },
      { hash: '#/settings', ready: () => page.locator('main h1').first().waitFor() },
      { hash: '#/admin', ready: () => page.locator('main h1').first().waitFor() },
    ];
    const found: Record<string, string[]> = {};
    for (const { hash, ready } of pages) {
      await step(page, `pseudo-page-${hash}`, async () => {
        await page.goto(`${url}/${hash}`);
        await ready();
        // Pages load their lists after their heading: wait until the network is quiet.
        await page.waitForLoadState('networkidle');
        const left = english(await shownTexts(page));
        if (left.length > 0) found[hash] = left;
        // The texts are longer in the pseudo-locale: the pages must stay usable (axe: names, contrast, roles).
        expect(await seriousAxeViolations(page)).toEqual([]);
        if (hash === base) {
          mkdirSync('docs/screenshots', { recursive: true });
          await page.screenshot({ path: 'docs/screenshots/pseudo-locale.png' });
        }
      });
    }
    expect(found).toEqual({});
  });
});
