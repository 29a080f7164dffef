import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { LoggedChange, LoggedChanges } from './history.types.js';

/** Logged changes longer than this (characters of JSON) are stored compressed. */
export const COMPRESS_ABOVE = 2048;
/** Marks a compressed entry; JSON text always starts with `{`, so the two never mix. */
const PREFIX = 'z:';

/**
 * The operation log's `changes` text: JSON as it is when small, else raw deflate in base64 behind
 * `z:` (a text column on both engines). Large deletes and wide rows shrink several times.
 */
export function encodeChanges(json: string, compress = true): string {
  if (!compress || json.length <= COMPRESS_ABOVE) return json;
  // Level 1: about half the time of the default level for ~7% more bytes (paid inside every large write).
  const packed = PREFIX + deflateRawSync(Buffer.from(json, 'utf8'), { level: 1 }).toString('base64');
  return packed.length < json.length ? packed : json;
}

export function decodeChanges(stored: string): string {
  return stored.startsWith(PREFIX) ? inflateRawSync(Buffer.from(stored.slice(PREFIX.length), 'base64')).toString('utf8') : stored;
}

/**
 * A write's logged changes as stored: when every row change has the same kind and table (a batch
 * append, update or delete: nearly every write), those two go once beside the rows instead of in each
 * (`{"o":…,"t":…,"rows":[{"r":…,…}]}`), which makes a 1,000-row append's text a third shorter and its
 * compression as much faster. `parseChanges` reads both forms.
 */
export function packChanges(changes: LoggedChanges): string {
  const rows = changes.rows;
  const first = rows[0];
  if (first === undefined || rows.some((c) => c.o !== first.o || c.t !== first.t)) return encodeChanges(JSON.stringify(changes));
  const packed: SharedChanges = { o: first.o, t: first.t, rows: rows.map(({ o: _o, t: _t, ...rest }) => rest) };
  if (changes.structure) packed.structure = changes.structure;
  return encodeChanges(JSON.stringify(packed));
}

/**
 * The stored text of a write's changes built by the operation log: the shared form when every row
 * change has one kind and table (`shared`, rows without `o` and `t`), else the plain form.
 * `compress: false` on PostgreSQL, which compresses large text itself (TOAST, lz4 where the server has
 * it: migration 0040) outside the writing process.
 */
export function storedChanges(form: { shared: SharedChanges } | { plain: LoggedChanges } | { appended: AppendedChanges }, compress: boolean): string {
  // An append's random ids hardly compress (deflate saved a third of the text for ~0.3 ms per 1,000
  // rows, measured): two plain arrays, compressed only when the names are the larger part.
  if ('appended' in form) {
    let names = 0;
    for (const name of form.appended.names) names += name.length;
    return encodeChanges(JSON.stringify(form.appended), compress && names > 22 * form.appended.ids.length);
  }
  return encodeChanges(JSON.stringify('shared' in form ? form.shared : form.plain), compress);
}

/**
 * An append of new rows (operation-log.ts): `{"o":"insert_row","t":…,"f":1,"ids":[…],"names":[…]}`,
 * each row's id and its name at the time; its cells are the rows' (insert-cells.ts).
 */
export type AppendedChanges = { o: 'insert_row'; t: string; f: 1; ids: string[]; names: string[] };

export type SharedChanges = { o: LoggedChange['o']; t: string; rows: Array<Omit<LoggedChange, 'o' | 't'>>; structure?: LoggedChanges['structure'] };

/** The logged changes of a stored `changes` text (either form, compressed or not). */
export function parseChanges(stored: string): LoggedChanges {
  const parsed = JSON.parse(decodeChanges(stored)) as LoggedChanges | SharedChanges | AppendedChanges;
  if (!('o' in parsed)) return parsed;
  if ('ids' in parsed) return { rows: parsed.ids.map((r, i): LoggedChange => ({ o: parsed.o, t: parsed.t, f: 1, r, n: parsed.names[i] ?? '' })) };
  const rows = parsed.rows.map((c): LoggedChange => ({ o: parsed.o, t: parsed.t, ...c }));
  return parsed.structure ? { rows, structure: parsed.structure } : { rows };
}
