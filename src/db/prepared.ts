/**
 * Named prepared statements for PostgreSQL statements whose text repeats: a text that ends with
 * `PREPARED_MARK` is sent as a named statement, so each connection parses and plans it once and then
 * only binds and runs it (node-postgres keeps the names a connection has prepared). For statements
 * whose planning costs more than their running, such as a write's one statement (WriteStatement).
 * At most `PREPARED_NAMES_MAX` texts get a name (a connection keeps each one it prepared for its
 * lifetime); later ones go unnamed, as every other statement does.
 */
/** At the end: what reads a statement's start to tell a write (db/commit-appendix.ts) still sees it. */
export const PREPARED_MARK = ' /* prepared */';

export const PREPARED_NAMES_MAX = 64;

const names = new Map<string, string>();

/** The statement name for `text`, or undefined: not marked, or the names are all taken. */
export function preparedName(text: string): string | undefined {
  if (!text.endsWith(PREPARED_MARK)) return undefined;
  let name = names.get(text);
  if (name === undefined && names.size < PREPARED_NAMES_MAX) names.set(text, (name = `bg_prepared_${names.size}`));
  return name;
}
