import { addSelectOption, COMPUTED_TYPES, selectOptions } from './column-types.js';
import type { ColumnMeta } from './metadata.js';
import { parseDateInput } from '../../shared/dates/index.js';

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

/** `YYYY-MM-DD` or `YYYY-MM-DD HH:mm`, the wall clock in TIME_ZONE (see src/shared/dates); null when no date. */
export function normalizeDate(input: string): string | null {
  return parseDateInput(input);
}

function coerceDate(value: unknown, column: ColumnMeta): Coerced {
  const reason = 'expected a date such as YYYY-MM-DD[ HH:mm], an ISO date-time, or the column\'s display format';
  if (typeof value !== 'string') return INVALID(reason);
  const format = typeof column.data?.format === 'string' ? column.data.format : 'YYYY-MM-DD';
  const date = parseDateInput(value, { format, dateOnly: !format.includes('HH:mm') });
  return date === null ? INVALID(reason) : SET(date);
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
