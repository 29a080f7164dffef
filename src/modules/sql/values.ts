import { isNode, type Node } from './parser.js';
import { sqlError } from './sql-error.js';
import { rawInJson, SEARCH_MIN_TERM } from '../filters/index.js';
import { instantOf, presentDate, timeZone, wallClockAt } from '../../shared/dates/index.js';

/** A constant of the statement: a literal or a bound `?` parameter. */
export type Scalar = string | number | boolean | null;

/** The values `?` placeholders stand for, by placeholder node. */
export type Bindings = Map<Node, Scalar>;

/** Bind `parameters` to the placeholders in order; the counts must agree and only scalars are accepted. */
export function bindParameters(placeholders: Node[], parameters: unknown[]): Bindings {
  if (parameters.length !== placeholders.length) {
    throw sqlError(`The statement has ${placeholders.length} placeholder(s) but ${parameters.length} parameter(s) were given.`);
  }
  const bindings: Bindings = new Map();
  placeholders.forEach((node, i) => {
    const value = parameters[i];
    if (typeof value === 'string' && value.includes('\0')) throw sqlError(`Parameter ${i + 1} contains a NUL character.`);
    if (value === null || typeof value === 'string' || typeof value === 'boolean') bindings.set(node, value);
    else if (typeof value === 'number' && Number.isFinite(value)) bindings.set(node, value);
    else throw sqlError(`Parameter ${i + 1} must be a string, a number, a boolean or null.`);
  });
  return bindings;
}

/** MySQL string-literal escapes: a doubled quote, and backslash sequences (`\%` and `\_` stay for LIKE). */
export function unescapeString(raw: string, quote: "'" | '"'): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === quote && raw[i + 1] === quote) {
      out += quote;
      i++;
    } else if (ch === '\\' && i + 1 < raw.length) {
      const next = raw[++i]!;
      const mapped: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', b: '\b', Z: '\x1a', '%': '\\%', _: '\\_' };
      out += mapped[next] ?? next;
    } else {
      out += ch;
    }
  }
  return out;
}

/** A backtick identifier may contain a doubled backtick. */
export function unescapeIdentifier(raw: string): string {
  return raw.replace(/``/g, '`');
}

/** The value of a constant node, or undefined when the node is not a constant. */
export function constantOf(node: Node, bindings: Bindings): Scalar | undefined {
  switch (node.type) {
    case 'origin':
      if (node.value === '?' && bindings.has(node)) return bindings.get(node)!;
      return undefined;
    case 'number':
    case 'bigint': {
      const n = typeof node.value === 'number' ? node.value : Number(node.value);
      if (!Number.isFinite(n)) throw sqlError(`Number ${String(node.value)} is out of range.`);
      return n;
    }
    case 'single_quote_string':
    case 'string':
      return typeof node.value === 'string' ? text(unescapeString(node.value, "'")) : undefined;
    case 'double_quote_string':
      return typeof node.value === 'string' ? text(unescapeString(node.value, '"')) : undefined;
    case 'bool':
      return typeof node.value === 'boolean' ? node.value : undefined;
    case 'null':
      return null;
    case 'unary_expr': {
      if ((node.operator !== '-' && node.operator !== '+') || !isNode(node.expr)) return undefined;
      const inner = constantOf(node.expr, bindings);
      if (typeof inner !== 'number') return undefined;
      return node.operator === '-' ? -inner : inner;
    }
    default:
      return undefined;
  }
}

/** PostgreSQL text cannot hold NUL; refused on both engines so they answer alike. */
function text(value: string): string {
  if (value.includes('\0')) throw sqlError('Text values cannot contain NUL characters.');
  return value;
}

const NUMERIC = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

export function describe(value: Scalar): string {
  return typeof value === 'string' ? `'${value.length > 40 ? `${value.slice(0, 40)}…` : value}'` : String(value);
}

export function toNumber(value: Scalar, where: string): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && NUMERIC.test(value)) {
    const n = Number(value);
    if (Number.isFinite(n)) return n;
  }
  if (typeof value === 'boolean') return value ? 1 : 0;
  throw sqlError(`${where} expects a number, got ${describe(value)}.`);
}

export function toText(value: Scalar, where: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  throw sqlError(`${where} expects text, got NULL.`);
}

/** Checkbox values are 1/0 in SQL. */
export function toFlag(value: Scalar, where: string): number {
  if (value === true || value === 1) return 1;
  if (value === false || value === 0) return 0;
  if (typeof value === 'string') {
    const text = value.trim().toLowerCase();
    if (text === 'true' || text === '1') return 1;
    if (text === 'false' || text === '0') return 0;
  }
  throw sqlError(`${where} expects true or false, got ${describe(value)}.`);
}

const DATE_LITERAL =
  /^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?\s*$/i;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Milliseconds of an ISO-8601 / RFC-3339 date or date-time (TIME_ZONE's wall clock when no offset is given), or null. */
export function parseInstant(text: string): number | null {
  const m = DATE_LITERAL.exec(text);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [hh, mm, ss] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  const ms = Number((m[7] ?? '0').slice(0, 3).padEnd(3, '0'));
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 59) return null;
  // setUTCFullYear, not Date.UTC: the latter maps years 0–99 to 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return null;
  const zone = m[8];
  // Without an offset the text is the wall clock of TIME_ZONE, as stored date cells are.
  if (!zone) return instantOf({ year: y, month: mo, day: d, hour: hh, minute: mm, second: ss }, timeZone(), ms);
  date.setUTCHours(hh, mm, ss, ms);
  let t = date.getTime();
  if (zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0);
    if (offset > 14 * 60) return null;
    t -= sign * offset * 60_000;
  }
  return Number.isFinite(t) ? t : null;
}

/**
 * The comparable text of an instant (its wall clock in TIME_ZONE): `YYYY-MM-DD HH:mm`, plus `:ss[.mmm]` only when not zero, so it
 * orders and equals the stored `YYYY-MM-DD[ HH:mm]` cells once those are padded to ` 00:00`.
 */
export function canonicalDate(ms: number): string {
  const t = wallClockAt(ms);
  const millis = ((ms % 1000) + 1000) % 1000;
  let text = `${pad(t.year, 4)}-${pad(t.month)}-${pad(t.day)} ${pad(t.hour)}:${pad(t.minute)}`;
  if (t.second !== 0 || millis !== 0) {
    text += `:${pad(t.second)}`;
    if (millis !== 0) text += `.${pad(millis, 3)}`;
  }
  return text;
}

export function toInstant(value: Scalar, where: string): number {
  const ms = typeof value === 'string' ? parseInstant(value) : null;
  if (ms === null) throw sqlError(`${where} expects a date such as '2024-05-31' or '2024-05-31T08:00:00Z', got ${describe(value)}.`);
  return ms;
}

/** A stored date cell (or its canonical form) as RFC 3339 with TIME_ZONE's offset: the one date presenter (src/shared/dates). */
export function dateToIso(value: unknown): unknown {
  return presentDate(value);
}

/** `2021-03-10T16:06:48.981+00:00`, the row timestamp format (the rows module's). */
export { isoMillis } from '../rows/index.js';

/**
 * A LIKE pattern (MySQL: `%`, `_`, backslash escapes) as a SQLite GLOB pattern, which is case-sensitive
 * like the original's LIKE (SQLite's own LIKE folds ASCII case).
 */
export function likeToGlob(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    let ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) {
      ch = pattern[++i]!;
      out += globLiteral(ch);
    } else if (ch === '%') out += '*';
    else if (ch === '_') out += '?';
    else out += globLiteral(ch);
  }
  return out;
}

function globLiteral(ch: string): string {
  return ch === '*' || ch === '?' || ch === '[' ? `[${ch}]` : ch;
}

/**
 * The literal runs of a LIKE pattern a trigram index of the rows' texts can narrow by (rows/search-index.ts),
 * folded A–Z as that index folds: runs between wildcards, split also at characters JSON may escape
 * (`rawInJson`), of at least `SEARCH_MIN_TERM` characters. A text cell the pattern matches holds each run
 * (in some case for ILIKE), so its row's text does.
 */
export function likeSearchRuns(pattern: string): string[] {
  const runs: string[] = [];
  let run = '';
  const end = () => {
    if (run.length >= SEARCH_MIN_TERM) runs.push(run.replace(/[A-Z]/g, (c) => c.toLowerCase()));
    run = '';
  };
  for (let i = 0; i < pattern.length; i++) {
    let ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) ch = pattern[++i]!;
    else if (ch === '%' || ch === '_') {
      end();
      continue;
    }
    if (rawInJson(ch)) run += ch;
    else end();
  }
  end();
  return [...new Set(runs)];
}

/** A LIKE pattern for PostgreSQL's `LIKE … ESCAPE '\'`: a trailing lone backslash would be an error there, so it matches itself. */
export function likeForPostgres(pattern: string): string {
  let trailing = 0;
  for (let i = pattern.length - 1; i >= 0 && pattern[i] === '\\'; i--) trailing++;
  return trailing % 2 === 1 ? `${pattern}\\` : pattern;
}
