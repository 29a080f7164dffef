import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { literalTexts } from './catalogue-check.js';

const WEB_SRC = path.resolve(import.meta.dirname, '../../web/src');
const I18N = path.join(WEB_SRC, 'i18n/index.ts');

describe('the console texts catalogue', () => {
  it('every user-visible text of every page and component comes from the catalogue', () => {
    const literals = literalTexts(WEB_SRC).map((l) => `${l.file}:${l.line} ${JSON.stringify(l.text)}`);
    // Fix: add the text to web/src/i18n/en.ts and render t('key') instead.
    expect(literals).toEqual([]);
  });

  it('the static check finds literal texts in JSX text, spoken attributes, string children and dialogs', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(path.join(tmpdir(), 'catalogue-'));
    mkdirSync(path.join(dir, 'i18n'));
    writeFileSync(path.join(dir, 'i18n', 'en.ts'), "export const messages = { 'a.b': 'Allowed here' };");
    writeFileSync(
      path.join(dir, 'Page.tsx'),
      [
        "export function Page({ n, on }: { n: number; on: boolean }) {",
        '  if (!window.confirm(`Delete ${n} rows?`)) return null;',
        '  return (',
        '    <form aria-label="New user">',
        '      <h1>Users</h1>',
        "      <input placeholder={on ? 'name' : t('a.b')} title={t('a.b')} />",
        "      <p>{on ? 'Active' : '—'} {n} × {t('a.b')}</p>",
        '      <Loading what="Loading bases" />',
        '    </form>',
        '  );',
        '}',
      ].join('\n'),
    );
    expect(literalTexts(dir).map((l) => `${l.line} ${l.text}`)).toEqual(['2 Delete rows?', '4 New user', '5 Users', '6 name', '7 Active', '8 Loading bases']);
  });
});

describe('picking the catalogue', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  async function i18nFor(languages: string[]) {
    vi.stubGlobal('navigator', { languages, language: languages[0] });
    vi.resetModules();
    // By path at run time: vitest loads it through vite (import.meta.glob); the server's tsc does not type-check web/.
    return (await import(/* @vite-ignore */ I18N)) as { language: string; t: (key: string, params?: Record<string, string | number>) => string };
  }

  it('a second catalogue file in web/src/i18n is picked up for a browser set to its language', async () => {
    const { language, t } = await i18nFor(['qps-ploc', 'en']);
    expect(language).toBe('qps-ploc');
    expect(t('login.submit')).toBe('⟦Šîĝñ îñ⟧');
    // placeholders stay placeholders in a translation and are filled in
    expect(t('toolbar.rowCount', { count: 1234 })).toBe('⟦1234 röwš⟧');
  });

  it('English is the default: for a language without a catalogue, and for a region of English', async () => {
    expect((await i18nFor(['de-DE', 'fr'])).language).toBe('en');
    const english = await i18nFor(['en-GB']);
    expect(english.language).toBe('en');
    expect(english.t('login.submit')).toBe('Sign in');
    expect(english.t('toolbar.deleteRows', { count: 3 })).toBe('Delete 3 row(s)');
  });

  it('language tags match whatever their case', async () => {
    expect((await i18nFor(['QPS-PLOC'])).language).toBe('qps-ploc');
  });
});
