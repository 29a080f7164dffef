/**
 * Normalizes `filter_term` values. A blank term (absent, null, "", []) makes the filter item incomplete,
 * and incomplete items are ignored, as the original does; a term of the wrong kind is an error.
 */
import { validDayKey } from './dates.js';

/** Thrown inside the parser only; `parseFilters` turns it into `{ok: false}`. */
export class FilterError extends Error {}

/** Arrays of option names / user ids longer than this are refused (keeps SQL parameter counts sane). */
export const MAX_TERM_VALUES = 1000;
/** `number_of_days_*` terms beyond this many days are refused (dates stay within years 1–9999). */
export const MAX_DAY_COUNT = 100_000;

export function isBlank(term: unknown): boolean {
  return term === undefined || term === null || term === '' || (Array.isArray(term) && term.length === 0);
}

function fail(columnName: string, what: string): never {
  throw new FilterError(`Filter on ${columnName} invalid: filter_term must be ${what}`);
}

export function textTerm(term: unknown, columnName: string): string {
  if (typeof term === 'string') return term;
  if (typeof term === 'number' && Number.isFinite(term)) return String(term);
  return fail(columnName, 'a string');
}

const NUMERIC = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

/** A number, a numeric string, or for duration columns also `h:mm` / `h:mm:ss` (seconds result). */
export function numberTerm(term: unknown, columnName: string, isDuration: boolean): number {
  if (typeof term === 'number' && Number.isFinite(term)) return term;
  if (typeof term === 'string') {
    if (NUMERIC.test(term)) {
      const value = Number(term);
      if (Number.isFinite(value)) return value;
    }
    if (isDuration) {
      // The full-width colon escaped: one character beyond Latin-1 makes V8 hold the whole bundle's source two bytes a character (test/cli/built.test.ts).
      const m = /^\s*(-)?(\d+)[:\uFF1A](\d{1,2})(?:[:\uFF1A](\d{1,2}))?\s*$/.exec(term);
      if (m) {
        const seconds = Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0);
        return m[1] ? -seconds : seconds;
      }
    }
  }
  return fail(columnName, isDuration ? 'a number or a duration (h:mm or h:mm:ss)' : 'a number');
}

/** Checkbox `is`: truthy means checked, falsy (including an absent term) means not checked, as the original. */
export function checkboxTerm(term: unknown, columnName: string): boolean {
  if (term === true || term === 1 || term === 'true' || term === 'True') return true;
  if (term === false || term === 0 || term === 'false' || term === 'False' || term === null || term === undefined || term === '') return false;
  return fail(columnName, 'true or false');
}

/** A string or an array of strings → distinct non-empty strings (empty ones are dropped). */
export function stringList(term: unknown, columnName: string): string[] {
  const items = Array.isArray(term) ? term : [term];
  if (items.length > MAX_TERM_VALUES) fail(columnName, `a list of at most ${MAX_TERM_VALUES} values`);
  const out = new Set<string>();
  for (const item of items) {
    if (item === '' || item === null || item === undefined) continue;
    if (typeof item !== 'string') fail(columnName, 'a string or a list of strings');
    out.add(item);
  }
  return [...out];
}

/** Select terms may name options by id or by name; ids are mapped to names (stored cells hold names). */
export function optionNames(values: string[], columnData: unknown): string[] {
  const options = (columnData as { options?: unknown } | null)?.options;
  const byId = new Map<string, string>();
  if (Array.isArray(options)) {
    for (const option of options) {
      const o = option as { id?: unknown; name?: unknown } | null;
      if (o && typeof o.id === 'string' && typeof o.name === 'string' && !byId.has(o.id)) byId.set(o.id, o.name);
    }
  }
  return [...new Set(values.map((v) => byId.get(v) ?? v))];
}

export function dayCountTerm(term: unknown, columnName: string): number {
  const n = typeof term === 'number' ? term : typeof term === 'string' && /^\s*[+-]?\d+\s*$/.test(term) ? Number(term) : NaN;
  if (!Number.isInteger(n) || Math.abs(n) > MAX_DAY_COUNT) fail(columnName, `a whole number of days (at most ${MAX_DAY_COUNT})`);
  return n;
}

/** `YYYY-MM-DD` (anything after the date, such as a time, is ignored) → day key. */
export function exactDateTerm(term: unknown, columnName: string): string {
  const m = typeof term === 'string' ? /^\s*(\d{4})-(\d{1,2})-(\d{1,2})/.exec(term) : null;
  const key = m ? validDayKey(Number(m[1]), Number(m[2]), Number(m[3])) : null;
  return key ?? fail(columnName, 'a date (YYYY-MM-DD)');
}

/** `YYYY-MM-DD HH:mm` (or with `T`; seconds ignored; a bare date means 00:00) → minute key. */
export function exactDateTimeTerm(term: unknown, columnName: string): string {
  const m = typeof term === 'string' ? /^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?)?\s*$/.exec(term) : null;
  const day = m ? validDayKey(Number(m[1]), Number(m[2]), Number(m[3])) : null;
  const hour = Number(m?.[4] ?? 0);
  const minute = Number(m?.[5] ?? 0);
  if (!day || hour > 23 || minute > 59) return fail(columnName, 'a date and time (YYYY-MM-DD HH:mm)');
  return `${day} ${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`;
}
