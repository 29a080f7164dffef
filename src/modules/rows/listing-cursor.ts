import { createHash } from 'node:crypto';
import { badRequest } from '../../shared/errors.js';

/**
 * The listing cursor (issue 34 item 2, a basegate addition; docs/base-data.md "Deep pages"): an opaque
 * text naming the last row a page answered — its internal id (the listings' tie-break) and, in a sorted
 * listing, its sort values — and the listing it belongs to. `cursor=` resumes right after that row in the
 * listing's order (keyset), so a page costs the same at any depth, and rows that existed throughout are
 * neither skipped nor repeated when others are inserted, deleted or changed in between: the position is
 * the row's place in the order, not a count of rows before it.
 *
 * Form: `<payload>.<check>`, both base64url; payload `[1, id, values]` as JSON; check the first 12
 * bytes of SHA-256 over the base, the listing (table, view, filter, sort columns with their types) and the
 * payload. When the values would make the cursor longer than `MAX_CURSOR_LENGTH` (a long text), the
 * payload is `[1, id, null]`: the values are read from that row when the cursor is used (so such a cursor
 * is refused once its row is deleted). The check is not a secret: it only tells a cursor of another listing, or a damaged one, from a
 * good one (both 400). A forged cursor can only start a listing the caller may read anyway somewhere else.
 */

export const MAX_CURSOR_LENGTH = 2048;
const VERSION = 1;

export interface CursorPosition {
  /** `base_rows.id` of the last row answered. */
  id: number;
  /** Its sort values, as the listing selected them (empty for an unsorted listing); null: read them from the row. */
  values: unknown[] | null;
}

/** A cursor after `position` in the listing named by `listing` (see `listingIdentity`). */
export function encodeCursor(baseId: number, listing: string, position: CursorPosition): string {
  const encode = (values: unknown[] | null) => {
    const payload = Buffer.from(JSON.stringify([VERSION, position.id, values])).toString('base64url');
    return `${payload}.${check(baseId, listing, payload)}`;
  };
  const full = encode(position.values?.map(plain) ?? null);
  return full.length <= MAX_CURSOR_LENGTH ? full : encode(null);
}

/** The position a cursor names; 400 `cursor invalid.` when it is damaged, of another version, or of another base or listing. */
export function decodeCursor(baseId: number, listing: string, cursor: string, sortValues: number): CursorPosition {
  const invalid = () => badRequest('cursor invalid.');
  if (cursor.length > MAX_CURSOR_LENGTH) throw invalid();
  const [payload, sum, extra] = cursor.split('.');
  if (!payload || !sum || extra !== undefined || sum !== check(baseId, listing, payload)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== VERSION) throw invalid();
  const [, id, values] = parsed as [unknown, unknown, unknown];
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) throw invalid();
  if (values === null) return { id, values: null };
  if (!Array.isArray(values) || values.length !== sortValues || !values.every(isSortValue)) throw invalid();
  return { id, values };
}

/**
 * What a cursor belongs to: the table, the view (by id), the filter body of `filtered-rows/`, and the
 * sort (columns, directions and the types their values compare as). A cursor used with any other listing
 * is refused; a view whose filters change keeps its cursors (they name a place in the same order).
 */
export function listingIdentity(parts: { tableId: string; viewId: string | null; filter: unknown; sort: string }): string {
  return JSON.stringify([parts.tableId, parts.viewId, parts.filter ?? null, parts.sort]);
}

function check(baseId: number, listing: string, payload: string): string {
  return createHash('sha256').update(`${baseId}\u0000${listing}\u0000${payload}`).digest().subarray(0, 12).toString('base64url');
}

/** A sort value as JSON keeps it (drivers answer numbers, texts, booleans and nulls; PostgreSQL's bigint and numeric as text). */
function plain(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  return value === undefined ? null : value;
}

function isSortValue(value: unknown): boolean {
  if (value === null || typeof value === 'boolean') return true;
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}
