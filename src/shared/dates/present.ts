import { instantOf, offsetMinutesAt, timeZone, wallClockAt, zoneGeneration } from './zone.js';

/**
 * Date cells as every answer shows them (rows API, whole-base read, SQL, webhooks, live operations):
 * RFC 3339 with the offset of TIME_ZONE in force at that date, `2030-06-20T00:00:00+02:00` for a day,
 * `2030-06-20T23:55:00+02:00` with minutes. Stored cells are the wall clock in TIME_ZONE
 * (`YYYY-MM-DD` or `YYYY-MM-DD HH:mm`, see ./parse.ts); formula results are RFC 3339 already.
 */

const STORED = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `+02:00` for 120 minutes. */
export function offsetText(minutes: number): string {
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** RFC 3339 of the instant `ms` in the zone (seconds precision). */
export function instantText(ms: number, tz = timeZone()): string {
  const w = wallClockAt(ms, tz);
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${offsetText(offsetMinutesAt(ms, tz))}`;
}

/** A stored wall-clock cell as RFC 3339, or null when the text is no stored date. */
function presentStored(text: string, tz: string): string | null {
  const m = STORED.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [m[1]!, m[2]!, m[3]!, m[4] ?? '00', m[5] ?? '00', m[6] ?? '00'];
  if (tz === 'UTC') return `${y}-${mo}-${d}T${h}:${mi}:${s}+00:00`;
  const ms = instantOf({ year: Number(y), month: Number(mo), day: Number(d), hour: Number(h), minute: Number(mi), second: Number(s) }, tz);
  if (!Number.isFinite(ms)) return null;
  return instantText(ms, tz);
}

// Cells repeat (a column of deadlines, one day over many rows): remember recent conversions.
const CACHE_LIMIT = 20_000;
let cache = new Map<string, string>();
let cacheGeneration = -1;

/**
 * A date cell as answers show it: stored wall-clock text → RFC 3339 with the zone's offset; RFC 3339
 * (a formula's date) as it is; anything else (not a date: old or foreign data) unchanged.
 */
export function presentDate(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (cacheGeneration !== zoneGeneration()) {
    cache = new Map();
    cacheGeneration = zoneGeneration();
  }
  let out = cache.get(value);
  if (out === undefined) {
    out = RFC3339.test(value) ? value : (presentStored(value, timeZone()) ?? value);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(value, out);
  }
  return out;
}

/** True for columns whose cells are dates: date columns, and formula / link-formula columns of result type date. */
export function isDateColumn(type: string, data: unknown): boolean {
  if (type === 'date') return true;
  if (type !== 'formula' && type !== 'link-formula') return false;
  return typeof data === 'object' && data !== null && (data as { result_type?: unknown }).result_type === 'date';
}

/** A cell of a column of that type as answers show it (dates presented, everything else as it is). */
export function presentCell(type: string, data: unknown, value: unknown): unknown {
  if (!isDateColumn(type, data)) return value;
  return Array.isArray(value) ? value.map(presentDate) : presentDate(value);
}
