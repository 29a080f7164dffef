import { messages as en, type MessageKey } from './en';

/**
 * A pseudo-locale (`qps-ploc`, the tag Windows and Chromium use for one): every English text with
 * accented letters, in ⟦brackets⟧. A browser set to it shows at a glance which texts of a page do not
 * come from the catalogue (they stay plain English) and whether longer words still fit. It also keeps
 * the catalogue loading honest: it is picked up like any translation, by being a file in this folder.
 */
const ACCENTED: Record<string, string> = { a: 'á', c: 'ç', e: 'é', g: 'ĝ', i: 'î', n: 'ñ', o: 'ö', s: 'š', u: 'ü', y: 'ý', A: 'Å', E: 'É', I: 'Î', O: 'Ö', S: 'Š', U: 'Ü' };

/** Accents every letter outside `{placeholders}`, which must stay as they are for t() to fill them. */
export function pseudo(text: string): string {
  const accented = text.split(/(\{\w+\})/).map((part, i) => (i % 2 === 1 ? part : part.replace(/[a-zA-Z]/g, (c) => ACCENTED[c] ?? c)));
  return `⟦${accented.join('')}⟧`;
}

/** Its texts are English, accented: `qps` is a private-use code that screen readers (and axe) do not know. */
export const lang = 'en-XA';

export const messages = Object.fromEntries(Object.entries(en).map(([key, text]) => [key, pseudo(text)])) as Record<MessageKey, string>;
