import { messages as en, type MessageKey } from './i18n/en';
import { t } from './i18n';

/**
 * The server's error messages stay English (`error_msg` is part of the contract: the official clients
 * match on it), so the console translates them where it shows them. A known message is one whose text
 * is the English text of a `serverError.*` key, `{name}` parts matching any text; it is shown in the
 * user's language with those parts kept. Any other message is shown as the server sent it.
 */
export interface KnownServerError {
  key: MessageKey;
  params: Record<string, string>;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Each `serverError.*` text as a whole-message pattern: `{name}` captures one or more characters. */
const PATTERNS = (Object.keys(en) as MessageKey[])
  .filter((key) => key.startsWith('serverError.'))
  .map((key) => {
    const names: string[] = [];
    const source = en[key]
      .split(/(\{\w+\})/)
      .map((part, i) => (i % 2 === 1 ? (names.push(part.slice(1, -1)), '(.+?)') : escape(part)))
      .join('');
    return { key, names, pattern: new RegExp(`^${source}$`) };
  });

/** The catalogue key of a server message and its varying parts, or undefined for a message we do not know. */
export function knownServerError(message: string): KnownServerError | undefined {
  for (const { key, names, pattern } of PATTERNS) {
    const match = pattern.exec(message);
    if (match) return { key, params: Object.fromEntries(names.map((name, i) => [name, match[i + 1]!])) };
  }
  return undefined;
}

/** A server message in the user's language when it is a known one; otherwise exactly as the server sent it. */
export function serverErrorText(message: string): string {
  const known = knownServerError(message);
  return known ? t(known.key, known.params) : message;
}
