import type { MetaColumn, MetaTable } from './metadata-doc.js';
import type { StoredRow } from '../filters/index.js';

/**
 * `default_msg` templating: `{Column Name}` is replaced by the row's display value of the column of
 * that name; placeholders naming no column, or a column without a display formatter (formula, button,
 * digital signature), stay as written. There is no escaping syntax. Pure.
 */

const PLACEHOLDER = /\{([^{]*?)\}/g;

export interface TemplateContext {
  /** Nickname of a user virtual id; unknown ids are shown as they are. */
  userName(virtualId: string): string;
  timeZone: string;
}

export function renderMessage(template: string, table: MetaTable, row: StoredRow, ctx: TemplateContext): string {
  if (!template.includes('{')) return template;
  const byName = new Map<string, MetaColumn>();
  for (const column of table.columns) if (!byName.has(column.name)) byName.set(column.name, column);
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    const column = byName.get(name);
    if (!column) return whole;
    const value = displayValue(column, row, ctx);
    return value === null ? whole : value;
  });
}

/** The text a user sees in a cell; null when the column type has no formatter. */
export function displayValue(column: MetaColumn, row: StoredRow, ctx: TemplateContext): string | null {
  switch (column.type) {
    case 'creator':
      return row._creator ? ctx.userName(row._creator) : '';
    case 'last-modifier':
      return row._last_modifier ? ctx.userName(row._last_modifier) : '';
    case 'ctime':
      return formatInstant(row._ctime, ctx.timeZone);
    case 'mtime':
      return formatInstant(row._mtime, ctx.timeZone);
  }
  const value = row.data[column.key];
  if (value === undefined || value === null || value === '') return FORMATTED.has(column.type) ? '' : null;
  switch (column.type) {
    case 'text':
    case 'long-text':
    case 'email':
    case 'url':
    case 'auto-number':
    case 'single-select':
    case 'department-single-select':
      return String(value);
    case 'number':
      return typeof value === 'number' ? formatNumber(value, column.data) : String(value);
    case 'rate':
      return String(value);
    case 'duration':
      return typeof value === 'number' ? formatDuration(value, column.data) : String(value);
    case 'checkbox':
      return value === true ? 'true' : 'false';
    case 'date':
      return typeof value === 'string' ? formatDate(value, column.data) : String(value);
    case 'multiple-select':
      return list(value).join(', ');
    case 'collaborator':
      return list(value).map((id) => ctx.userName(id)).join(', ');
    case 'file':
    case 'image':
      return fileNames(value).join(', ');
    case 'link': {
      // Stored link cells hold row ids; only display values (when a caller supplies them) are shown.
      const shown = linkDisplay(value);
      return shown.length > 0 ? shown.join(', ') : null;
    }
    case 'geolocation':
      return geolocation(value);
    default:
      return null;
  }
}

const FORMATTED = new Set([
  'text', 'long-text', 'email', 'url', 'auto-number', 'single-select', 'department-single-select', 'number', 'rate', 'duration',
  'checkbox', 'date', 'multiple-select', 'collaborator', 'file', 'image', 'link', 'geolocation',
]);

function list(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v) => typeof v === 'string' || typeof v === 'number').map(String);
  return typeof value === 'string' ? [value] : [];
}

type NumberData = { format?: unknown; precision?: unknown; enable_precision?: unknown; decimal?: unknown; thousands?: unknown };

const CURRENCY: Record<string, string> = { dollar: '$', euro: '€', yuan: '¥' };

export function formatNumber(value: number, data: unknown): string {
  const d = (data ?? {}) as NumberData;
  const format = typeof d.format === 'string' ? d.format : 'number';
  const precision = d.enable_precision === true && typeof d.precision === 'number' ? Math.min(Math.max(0, d.precision), 8) : null;
  const scaled = format === 'percent' ? value * 100 : value;
  let text = precision === null ? String(Number(scaled.toPrecision(15))) : scaled.toFixed(precision);
  if (precision === null && CURRENCY[format]) text = scaled.toFixed(2);
  const [intPart = '', frac] = text.split('.');
  const separator = d.thousands === 'comma' ? ',' : d.thousands === 'space' ? ' ' : d.thousands === 'dot' ? '.' : '';
  const grouped = separator ? intPart.replace(/\B(?=(\d{3})+(?!\d))/g, separator) : intPart;
  const decimalMark = d.decimal === 'comma' ? ',' : '.';
  const body = frac === undefined ? grouped : `${grouped}${decimalMark}${frac}`;
  if (format === 'percent') return `${body}%`;
  const symbol = CURRENCY[format];
  if (symbol) return format === 'euro' ? `${body} ${symbol}` : `${symbol}${body}`;
  return body;
}

export function formatDuration(seconds: number, data: unknown): string {
  const withSeconds = (data as { duration_format?: unknown } | null)?.duration_format === 'h:mm:ss';
  const sign = seconds < 0 ? '-' : '';
  const total = Math.round(Math.abs(seconds));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const mm = String(m).padStart(2, '0');
  return withSeconds ? `${sign}${h}:${mm}:${String(s).padStart(2, '0')}` : `${sign}${h}:${mm}`;
}

/** A stored `YYYY-MM-DD[ HH:mm]` shown in the column's format (tokens YYYY, MM, M, DD, D, HH, mm). */
export function formatDate(value: string, data: unknown): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}))?/.exec(value);
  if (!m) return value;
  const format = typeof (data as { format?: unknown } | null)?.format === 'string' ? ((data as { format: string }).format) : 'YYYY-MM-DD';
  const [, y, mo, d, hh, mi] = m;
  const hasTime = /HH|mm/.test(format);
  const tokens: Record<string, string> = {
    YYYY: y!, MM: mo!, M: String(Number(mo)), DD: d!, D: String(Number(d)), HH: hh ?? '00', mm: mi ?? '00',
  };
  const out = format.replace(/YYYY|MM|M|DD|D|HH|mm/g, (t) => tokens[t] ?? t);
  return hasTime && hh === undefined ? out.replace(/\s*00:00$/, '') : out;
}

function formatInstant(ms: number, timeZone: string): string {
  if (!Number.isFinite(ms) || ms <= 0) return '';
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23',
  }).formatToParts(new Date(ms));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}

function fileNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((f) => {
    if (typeof f === 'string') return decodeSafe(f.split('/').pop() ?? f);
    if (f && typeof f === 'object' && typeof (f as { name?: unknown }).name === 'string') return (f as { name: string }).name;
    return '';
  }).filter((n) => n !== '');
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function linkDisplay(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.map((v) => {
    if (v && typeof v === 'object') {
      const o = v as { display_value?: unknown; row_id?: unknown };
      if (typeof o.display_value === 'string' || typeof o.display_value === 'number') return String(o.display_value);
    }
    return '';
  }).filter((n) => n !== '');
}

function geolocation(value: unknown): string {
  if (!value || typeof value !== 'object') return String(value);
  const g = value as Record<string, unknown>;
  const parts = ['country_region', 'province', 'city', 'district', 'detail'].map((k) => g[k]).filter((v) => typeof v === 'string' && v !== '');
  if (typeof g.lng === 'number' && typeof g.lat === 'number') parts.push(`lng: ${g.lng}, lat: ${g.lat}`);
  return parts.join(' ');
}
