import { addSelectOption, COMPUTED_TYPES, selectOptions } from './column-types.js';
import type { ColumnMeta } from './metadata.js';

/**
 * What a written value becomes in storage:
 * - `set`: store `value` under the column key;
 * - `clear`: remove the key (empty cell);
 * - `ignore`: the column is not writable through rows (computed columns, links) — left untouched;
 * - `invalid`: the value cannot be stored; the whole request is refused.
 */
export type Coerced =
  | { kind: 'set'; value: unknown }
  | { kind: 'clear' }
  | { kind: 'ignore' }
  | { kind: 'invalid'; reason: string };

const SET = (value: unknown): Coerced => ({ kind: 'set', value });
const CLEAR: Coerced = { kind: 'clear' };
const IGNORE: Coerced = { kind: 'ignore' };
const INVALID = (reason: string): Coerced => ({ kind: 'invalid', reason });

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

/**
 * Validate and convert one written cell value for its column (see docs/base-data.md for each rule).
 * Select columns gain an option when a value names an unknown one (mutating `column.data`).
 */
export function coerceCell(column: ColumnMeta, value: unknown): Coerced {
  if (COMPUTED_TYPES.includes(column.type) || column.type === 'link') return IGNORE;
  if (column.type === 'checkbox') return coerceCheckbox(value);
  if (isEmpty(value)) return CLEAR;
  switch (column.type) {
    case 'text':
    case 'email':
    case 'url':
    case 'auto-number':
      return coerceText(value);
    case 'long-text':
      if (typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { text?: unknown }).text === 'string') {
        const text = (value as { text: string }).text;
        return text === '' ? CLEAR : SET(text);
      }
      return coerceText(value);
    case 'number':
      return coerceNumber(value);
    case 'rate': {
      const n = coerceNumber(value);
      if (n.kind !== 'set') return n;
      const rating = n.value as number;
      return Number.isInteger(rating) && rating >= 0 ? n : INVALID('a rating is a whole number of 0 or more');
    }
    case 'duration':
      return coerceDuration(value);
    case 'date':
      return coerceDate(value, column);
    case 'single-select':
      return coerceSingleSelect(column, value);
    case 'multiple-select':
      return coerceMultipleSelect(column, value);
    case 'collaborator':
      return coerceStringList(value, 'a collaborator cell takes user ids');
    case 'image':
      return coerceStringList(value, 'an image cell takes a list of URLs');
    case 'file':
      return coerceFiles(value);
    case 'geolocation':
      return typeof value === 'object' && !Array.isArray(value) ? SET(value) : INVALID('a geolocation cell takes an object');
    case 'digital-sign':
      return coerceSignature(value);
    default:
      return SET(value);
  }
}

function coerceText(value: unknown): Coerced {
  if (typeof value === 'string') return SET(value);
  if (typeof value === 'number' && Number.isFinite(value)) return SET(String(value));
  if (typeof value === 'boolean') return SET(String(value));
  return INVALID('expected text');
}

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

function coerceNumber(value: unknown): Coerced {
  if (typeof value === 'number') return Number.isFinite(value) ? SET(value) : INVALID('expected a finite number');
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return CLEAR;
    if (NUMERIC.test(text)) {
      const n = Number(text);
      if (Number.isFinite(n)) return SET(n);
    }
  }
  return INVALID('expected a number');
}

function coerceCheckbox(value: unknown): Coerced {
  if (value === true || value === 1) return SET(true);
  if (value === false || value === 0 || value === null || value === undefined || value === '') return SET(false);
  if (typeof value === 'string') {
    const text = value.trim().toLowerCase();
    if (text === 'true' || text === '1') return SET(true);
    if (text === 'false' || text === '0') return SET(false);
  }
  return INVALID('expected true or false');
}

/** Seconds; `h:mm` or `h:mm:ss` strings are converted. */
function coerceDuration(value: unknown): Coerced {
  if (typeof value === 'string') {
    const match = /^\s*(\d+):([0-5]?\d)(?::([0-5]?\d))?\s*$/.exec(value);
    if (match) return SET(Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3] ?? 0));
  }
  const n = coerceNumber(value);
  return n.kind === 'invalid' ? INVALID('expected seconds or h:mm[:ss]') : n;
}

const DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const DATE_TIME = /^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function validDay(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/**
 * `YYYY-MM-DD` or `YYYY-MM-DD HH:mm` (UTC, the base's zone). ISO strings with seconds, `T` or an offset are
 * accepted and converted; seconds are dropped.
 */
export function normalizeDate(input: string): string | null {
  const text = input.trim();
  const day = DATE.exec(text);
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    return validDay(y, m, d) ? `${day[1]}-${pad(m)}-${pad(d)}` : null;
  }
  const dt = DATE_TIME.exec(text);
  if (!dt) return null;
  const [y, m, d, hh, mm] = [Number(dt[1]), Number(dt[2]), Number(dt[3]), Number(dt[4]), Number(dt[5])];
  if (!validDay(y, m, d) || hh > 23 || mm > 59) return null;
  let ms = Date.UTC(y, m - 1, d, hh, mm);
  const zone = dt[7];
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
    if (offset > 14 * 60) return null;
    ms -= sign * offset * 60_000;
  }
  const t = new Date(ms);
  return `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}`;
}

function coerceDate(value: unknown, column: ColumnMeta): Coerced {
  const reason = 'expected a date such as YYYY-MM-DD[ HH:mm], an ISO date-time, or the column\'s display format';
  if (typeof value !== 'string') return INVALID(reason);
  const format = typeof column.data?.format === 'string' ? column.data.format : 'YYYY-MM-DD';
  const text = fromDisplayFormat(value.trim(), format) ?? value;
  // A date-only column keeps the calendar day as written: converting an offset must not move it.
  const writtenDay = !format.includes('HH:mm') ? /^(\d{4}-\d{1,2}-\d{1,2})[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?\s*(?:Z|[+-]\d{2}:?\d{2})$/i.exec(text.trim()) : null;
  const date = normalizeDate(writtenDay ? writtenDay[1]! : text);
  return date === null ? INVALID(reason) : SET(date);
}

/**
 * A date in one of the display formats (`YYYY/MM/DD`, `M/D/YYYY`, `DD/MM/YYYY`, `DD.MM.YYYY`, each with an
 * optional ` HH:mm`) as `YYYY-MM-DD[ HH:mm]`; a slash date with the year last is day-first only when the
 * column's format is. Null when the text is in none of them.
 */
export function fromDisplayFormat(text: string, columnFormat: string): string | null {
  const time = /^(.*?)(?:\s+(\d{1,2}:\d{2}))?$/.exec(text);
  if (!time) return null;
  const [datePart, clock] = [time[1]!, time[2]];
  const withTime = (y: string, m: string, d: string) => `${y}-${m}-${d}${clock ? ` ${clock}` : ''}`;
  let m = /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/.exec(datePart);
  if (m) return withTime(m[1]!, m[2]!, m[3]!);
  m = /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/.exec(datePart);
  if (m) return withTime(m[3]!, m[2]!, m[1]!);
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(datePart);
  if (m) return columnFormat.startsWith('DD/MM') ? withTime(m[3]!, m[2]!, m[1]!) : withTime(m[3]!, m[1]!, m[2]!);
  return null;
}

/** An option name for `value` (a name, else an option id), creating the option when unknown. */
function optionName(column: ColumnMeta, value: string): string {
  const options = selectOptions(column);
  if (options.some((o) => o.name === value)) return value;
  const byId = options.find((o) => o.id === value);
  if (byId) return byId.name;
  return addSelectOption(column, value).name;
}

function coerceSingleSelect(column: ColumnMeta, value: unknown): Coerced {
  if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
  if (typeof value !== 'string') return INVALID('expected an option name');
  if (value.trim() === '') return CLEAR;
  return SET(optionName(column, value));
}

function coerceMultipleSelect(column: ColumnMeta, value: unknown): Coerced {
  const items = Array.isArray(value) ? value : [value];
  const names: string[] = [];
  for (const item of items) {
    const text = typeof item === 'number' && Number.isFinite(item) ? String(item) : item;
    if (typeof text !== 'string') return INVALID('expected a list of option names');
    if (text.trim() === '') continue;
    const name = optionName(column, text);
    if (!names.includes(name)) names.push(name);
  }
  return names.length === 0 ? CLEAR : SET(names);
}

function coerceStringList(value: unknown, reason: string): Coerced {
  const items = Array.isArray(value) ? value : [value];
  const list: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') return INVALID(reason);
    if (item !== '' && !list.includes(item)) list.push(item);
  }
  return list.length === 0 ? CLEAR : SET(list);
}

function coerceFiles(value: unknown): Coerced {
  const items = Array.isArray(value) ? value : [value];
  for (const item of items) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return INVALID('a file cell takes a list of {name, url, …} objects');
    const file = item as Record<string, unknown>;
    if (typeof file.name !== 'string' || typeof file.url !== 'string') return INVALID('a file cell takes a list of {name, url, …} objects');
  }
  return items.length === 0 ? CLEAR : SET(items);
}

/** A signature: `{username, sign_image_url, sign_time}` (strings), as the original stores it. */
function coerceSignature(value: unknown): Coerced {
  const reason = 'a digital-sign cell takes {username, sign_image_url, sign_time}';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return INVALID(reason);
  const sign = value as Record<string, unknown>;
  if (typeof sign.username !== 'string' || typeof sign.sign_image_url !== 'string') return INVALID(reason);
  if (sign.sign_time !== undefined && typeof sign.sign_time !== 'string') return INVALID(reason);
  const { username, sign_image_url, sign_time } = sign;
  return SET(sign_time === undefined ? { username, sign_image_url } : { username, sign_image_url, sign_time });
}
