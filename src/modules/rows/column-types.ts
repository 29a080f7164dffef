import { badRequest } from '../../shared/errors.js';
import { randomAlnum } from './ids.js';
import type { ColumnMeta } from './metadata.js';

/** Column types this server stores and serves. */
export const SUPPORTED_TYPES = [
  'text',
  'long-text',
  'number',
  'checkbox',
  'date',
  'duration',
  'single-select',
  'multiple-select',
  'collaborator',
  'email',
  'url',
  'rate',
  'link',
  'creator',
  'ctime',
  'mtime',
  'last-modifier',
  'auto-number',
  'file',
  'image',
  'geolocation',
  'button',
  'digital-sign',
  'formula',
  'link-formula',
] as const;
export type ColumnType = (typeof SUPPORTED_TYPES)[number];

/** Types the original knows but this server does not model (departments). */
const UNSUPPORTED_TYPES = ['department-single-select'];

/** The first column names the row, so only these types may be first (the original's rule). */
export const FIRST_COLUMN_TYPES: readonly string[] = ['text', 'number', 'date', 'single-select', 'formula', 'auto-number'];

/** Values of these come from the row itself, its formulas (or nowhere): writes to them are ignored, as in the original. */
export const COMPUTED_TYPES: readonly string[] = ['creator', 'ctime', 'mtime', 'last-modifier', 'button', 'formula', 'link-formula'];

/** Batch column creation refuses these (they need a second table, a counter fill or a table-wide compute). */
export const NOT_BATCH_APPENDABLE: readonly string[] = ['link', 'auto-number', 'formula', 'link-formula'];

export function checkColumnType(value: unknown): ColumnType {
  if (typeof value !== 'string' || value === '') throw badRequest('column_type invalid.');
  if (UNSUPPORTED_TYPES.includes(value)) throw badRequest(`column type ${value} is not supported.`);
  if (!(SUPPORTED_TYPES as readonly string[]).includes(value)) throw badRequest(`column_type ${value} invalid.`);
  return value as ColumnType;
}

export const MAX_COLUMN_NAME_LENGTH = 255;

/** Row fields every listed row carries; a column of that name would be shadowed in `convert_keys` output. */
const RESERVED_NAMES = ['_id', '_ctime', '_mtime', '_creator', '_last_modifier', '_archived', '_locked', '_locked_by'];

/** Trimmed column name: 1–255 characters without `.`, `{`, `}` or backtick (the OpenAPI pattern), not a row field. */
export function checkColumnName(value: unknown, field = 'column_name'): string {
  if (typeof value !== 'string') throw badRequest(`${field} invalid.`);
  const name = value.trim();
  if (name === '' || [...name].length > MAX_COLUMN_NAME_LENGTH || /[.{}`]/.test(name) || RESERVED_NAMES.includes(name)) {
    throw badRequest(`${field} invalid.`);
  }
  return name;
}

const NUMBER_FORMATS = ['number', 'percent', 'dollar', 'euro', 'yuan'];
const DATE_FORMATS = [
  'YYYY-MM-DD',
  'YYYY-MM-DD HH:mm',
  'M/D/YYYY',
  'M/D/YYYY HH:mm',
  'DD/MM/YYYY',
  'DD/MM/YYYY HH:mm',
  'DD.MM.YYYY',
  'DD.MM.YYYY HH:mm',
];
/** `#RRGGBB`, or the short `#RGB` the typed clients also send. */
export const COLOR = /^#([A-Fa-f0-9]{6}|[A-Fa-f0-9]{3})$/;

/** Option colours handed out to new select options, as the original's palette. */
export const OPTION_COLORS: ReadonlyArray<{ color: string; textColor: string }> = [
  { color: '#FFFCB5', textColor: '#202020' },
  { color: '#FFEAB6', textColor: '#202020' },
  { color: '#FFD9C8', textColor: '#202020' },
  { color: '#DCFFFE', textColor: '#202020' },
  { color: '#D1FFDF', textColor: '#202020' },
  { color: '#D8FAFF', textColor: '#202020' },
  { color: '#D7E8FF', textColor: '#202020' },
  { color: '#E6DCFF', textColor: '#202020' },
  { color: '#9860E5', textColor: '#FFFFFF' },
  { color: '#F4667C', textColor: '#FFFFFF' },
];

export interface SelectOption {
  id: string;
  name: string;
  color: string;
  textColor: string;
  [extra: string]: unknown;
}

function asObject(value: unknown, field: string): Record<string, unknown> {
  if (value === undefined || value === null || value === '') return {};
  if (typeof value === 'string') {
    // Form bodies carry column_data as a JSON string.
    try {
      return asObject(JSON.parse(value), field);
    } catch {
      throw badRequest(`${field} invalid.`);
    }
  }
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${field} invalid.`);
  return { ...(value as Record<string, unknown>) };
}

function pick(data: Record<string, unknown>, field: string, allowed: readonly string[], fallback: string): string {
  const value = data[field];
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value !== 'string' || !allowed.includes(value)) throw badRequest(`column_data.${field} invalid.`);
  return value;
}

/**
 * The stored `data` of a new (or retyped) column: the given `column_data` validated for the type, with
 * the original's defaults filled in. Link columns are built by the columns service instead.
 */
export function normalizeColumnData(type: ColumnType, raw: unknown, existing?: ColumnMeta): Record<string, unknown> | null {
  const data = asObject(raw, 'column_data');
  switch (type) {
    case 'number':
      return {
        ...data,
        format: pick(data, 'format', NUMBER_FORMATS, 'number'),
        decimal: pick(data, 'decimal', ['dot', 'comma'], 'dot'),
        thousands: pick(data, 'thousands', ['no', 'space', 'comma'], 'no'),
      };
    case 'date':
      return { ...data, format: pick(data, 'format', DATE_FORMATS, 'YYYY-MM-DD') };
    case 'duration':
      return { ...data, format: 'duration', duration_format: pick(data, 'duration_format', ['h:mm', 'h:mm:ss'], 'h:mm') };
    case 'single-select':
    case 'multiple-select': {
      const previous = existing && (existing.type === 'single-select' || existing.type === 'multiple-select') ? selectOptions(existing) : [];
      return { ...data, options: normalizeOptions(data.options ?? previous) };
    }
    case 'rate': {
      const max = data.rate_max_number ?? 5;
      if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 10) throw badRequest('column_data.rate_max_number invalid.');
      const color = data.rate_style_color ?? '#FF8000';
      if (typeof color !== 'string' || !COLOR.test(color)) throw badRequest('column_data.rate_style_color invalid.');
      return { ...data, rate_max_number: max, rate_style_color: color, rate_style_type: data.rate_style_type ?? 'dtable-icon-rate' };
    }
    case 'auto-number': {
      const digits = data.digits ?? 4;
      if (typeof digits !== 'number' || !Number.isInteger(digits) || digits < 1 || digits > 15) throw badRequest('column_data.digits invalid.');
      const prefixType = pick(data, 'prefix_type', ['string', 'date'], 'string');
      const prefix = data.prefix ?? '';
      if (typeof prefix !== 'string' || prefix.length > 50) throw badRequest('column_data.prefix invalid.');
      return { ...data, format: '0'.repeat(digits), digits, prefix_type: prefixType, prefix, max_used_auto_number: 0 };
    }
    case 'geolocation':
      return { ...data, geo_format: pick(data, 'geo_format', ['geolocation', 'lng_lat', 'country_region', 'province', 'province_city', 'province_city_district'], 'lng_lat') };
    default:
      return Object.keys(data).length > 0 ? data : null;
  }
}

export function selectOptions(column: ColumnMeta): SelectOption[] {
  const options = column.data?.options;
  return Array.isArray(options) ? (options as SelectOption[]) : [];
}

function normalizeOptions(raw: unknown): SelectOption[] {
  if (!Array.isArray(raw)) throw badRequest('column_data.options invalid.');
  const result: SelectOption[] = [];
  const names = new Set<string>();
  const ids = new Set<string>();
  raw.forEach((item, index) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw badRequest(`column_data.options.${index} invalid.`);
    const option = item as Record<string, unknown>;
    const name = typeof option.name === 'number' ? String(option.name) : option.name;
    if (typeof name !== 'string' || name.trim() === '') throw badRequest(`column_data.options.${index}.name invalid.`);
    if (names.has(name)) throw badRequest(`option ${name} exists.`);
    const palette = OPTION_COLORS[index % OPTION_COLORS.length]!;
    const color = option.color ?? palette.color;
    const textColor = option.textColor ?? palette.textColor;
    if (typeof color !== 'string' || !COLOR.test(color)) throw badRequest(`column_data.options.${index}.color invalid.`);
    if (typeof textColor !== 'string' || !COLOR.test(textColor)) throw badRequest(`column_data.options.${index}.textColor invalid.`);
    let id = typeof option.id === 'string' && /^[A-Za-z0-9]{1,20}$/.test(option.id) && !ids.has(option.id) ? option.id : '';
    while (id === '' || ids.has(id)) id = randomAlnum(6, '0123456789');
    names.add(name);
    ids.add(id);
    result.push({ ...option, id, name, color, textColor });
  });
  return result;
}

/** Add an option named `name` (for a value naming an unknown option) and return it. */
export function addSelectOption(column: ColumnMeta, name: string): SelectOption {
  const options = selectOptions(column);
  const ids = new Set(options.map((o) => o.id));
  let id = randomAlnum(6, '0123456789');
  while (ids.has(id)) id = randomAlnum(6, '0123456789');
  const palette = OPTION_COLORS[options.length % OPTION_COLORS.length]!;
  const option: SelectOption = { id, name, color: palette.color, textColor: palette.textColor };
  column.data = { ...(column.data ?? {}), options: [...options, option] };
  return option;
}
