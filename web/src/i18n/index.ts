import { messages as en, type MessageKey } from './en';

type Catalogue = Partial<Record<MessageKey, string>>;

/** Every catalogue file in this folder (`en.ts`, `de.ts`, …), by language code. */
/** A catalogue's `lang`, when given, is the page's `<html lang>` instead of its file name. */
const files = import.meta.glob<{ messages: Catalogue; lang?: string }>('./*.ts', { eager: true });
const modules = new Map(
  Object.entries(files)
    .filter(([file]) => !file.endsWith('/index.ts'))
    .map(([file, module]) => [file.replace(/^\.\/|\.ts$/g, ''), module]),
);
const catalogues = new Map<string, Catalogue>([...modules].map(([code, module]) => [code, module.messages]));

/** The first of the browser's languages that has a catalogue; English otherwise. */
function pickLanguage(): string {
  for (const tag of navigator.languages ?? [navigator.language]) {
    const code = tag.toLowerCase();
    if (catalogues.has(code)) return code;
    const base = code.split('-')[0]!;
    if (catalogues.has(base)) return base;
  }
  return 'en';
}

export const language = pickLanguage();
/** The language of the page's text, for `<html lang>` (screen readers pick their voice by it). */
export const documentLanguage = modules.get(language)?.lang ?? language;
const active = catalogues.get(language) ?? {};

/** The text for `key` in the user's language (English when missing), `{name}` filled from `params` (a missing value as nothing). */
export function t(key: MessageKey, params: Record<string, string | number | null | undefined> = {}): string {
  const text = active[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (name in params ? String(params[name] ?? '') : whole));
}
