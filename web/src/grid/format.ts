/** How cell values are shown: dates in the column's format, and which URLs may become links. */

/** Schemes a cell value may link to; anything else (javascript:, data:, …) is shown as plain text. */
const LINK_SCHEMES = new Set(['http:', 'https:', 'mailto:']);

/** The value as a link target if it is an absolute http, https or mailto URL; otherwise null. */
export function safeHref(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  return LINK_SCHEMES.has(url.protocol) ? url.href : null;
}

const DATE_PARTS = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?/;

/**
 * A date cell (`2026-12-31`, `2026-12-31 09:30`, `2026-12-31T00:00:00+00:00`) in the column's
 * format (`YYYY-MM-DD`, `M/D/YYYY`, `DD.MM.YYYY HH:mm`, …; default `YYYY-MM-DD`). The digits are
 * taken as written: a date column holds a calendar date, which must not move with the viewer's zone.
 */
export function formatDate(value: unknown, format: unknown): string {
  if (typeof value !== 'string') return '';
  const m = DATE_PARTS.exec(value);
  if (!m) return value;
  const [, year, month, day, hour, minute] = m as unknown as [string, string, string, string, string?, string?];
  const pattern = typeof format === 'string' && format ? format : 'YYYY-MM-DD';
  const tokens: Record<string, string> = {
    YYYY: year,
    MM: month,
    M: String(Number(month)),
    DD: day,
    D: String(Number(day)),
    HH: hour ?? '00',
    mm: minute ?? '00',
  };
  return pattern.replace(/YYYY|MM|M|DD|D|HH|mm/g, (t) => tokens[t]!);
}

/** A point in time (created/modified time) as `YYYY-MM-DD HH:mm` in the viewer's time zone. */
export function formatInstant(value: unknown): string {
  if (typeof value !== 'string') return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  const p = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())} ${p(date.getHours())}:${p(date.getMinutes())}`;
}
