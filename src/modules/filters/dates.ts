/**
 * Calendar arithmetic on naive keys (`YYYY-MM-DD`, `YYYY-MM-DD HH:mm`) and time-zone conversion through
 * `Intl.DateTimeFormat`. Keys are compared as strings, which orders them correctly (fixed width, 4-digit year).
 */

const DAY_MS = 86_400_000;

export const DAY_KEY = /^([0-9]{4})-([0-9]{2})-([0-9]{2})/;
export const MINUTE_KEY = /^([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2})/;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Date.UTC without its trap of reading years 0–99 as 1900–1999. */
function utc(y: number, monthIndex: number, d: number, h = 0, mi = 0, s = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(y, monthIndex, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}

/** Days since 1970-01-01 → `YYYY-MM-DD` (proleptic Gregorian). */
function keyOfEpochDay(epochDay: number): string {
  const d = new Date(epochDay * DAY_MS);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

function epochDayOf(y: number, m: number, d: number): number {
  return Math.round(utc(y, m - 1, d) / DAY_MS);
}

function partsOf(dayKey: string): [number, number, number] {
  return [Number(dayKey.slice(0, 4)), Number(dayKey.slice(5, 7)), Number(dayKey.slice(8, 10))];
}

export function daysInMonth(y: number, m: number): number {
  return new Date(utc(y, m, 0)).getUTCDate();
}

/** A real calendar day as a key, or null (`2023-02-30` is not one). */
export function validDayKey(y: number, m: number, d: number): string | null {
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return null;
  return `${pad(y, 4)}-${pad(m)}-${pad(d)}`;
}

export function addDays(dayKey: string, n: number): string {
  const [y, m, d] = partsOf(dayKey);
  return keyOfEpochDay(epochDayOf(y, m, d) + n);
}

/** Month arithmetic that clamps the day to the target month's length (Jan 31 + 1 month → Feb 28/29). */
export function addMonths(dayKey: string, n: number): string {
  const [y, m, d] = partsOf(dayKey);
  const index = y * 12 + (m - 1) + n;
  const ty = Math.floor(index / 12);
  const tm = (index % 12) + 1;
  return `${pad(ty, 4)}-${pad(tm)}-${pad(Math.min(d, daysInMonth(ty, tm)))}`;
}

/** ISO weekday, Monday = 1 … Sunday = 7. */
export function isoWeekday(dayKey: string): number {
  const [y, m, d] = partsOf(dayKey);
  const day = new Date(utc(y, m - 1, d)).getUTCDay();
  return day === 0 ? 7 : day;
}

export function monthStart(dayKey: string): string {
  return `${dayKey.slice(0, 7)}-01`;
}

export function monthEnd(dayKey: string): string {
  const [y, m] = partsOf(dayKey);
  return `${dayKey.slice(0, 7)}-${pad(daysInMonth(y, m))}`;
}

/** The next key of the same unit: the next day, or the next minute. */
export function nextKey(key: string, unit: 'day' | 'minute'): string {
  if (unit === 'day') return addDays(key, 1);
  const ms = utc(...minuteParts(key)) + 60_000;
  const d = new Date(ms);
  return `${keyOfEpochDay(Math.floor(ms / DAY_MS))} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

export function previousKey(key: string, unit: 'day' | 'minute'): string {
  if (unit === 'day') return addDays(key, -1);
  const ms = utc(...minuteParts(key)) - 60_000;
  const d = new Date(ms);
  return `${keyOfEpochDay(Math.floor(ms / DAY_MS))} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
}

function minuteParts(key: string): [number, number, number, number, number] {
  const [y, m, d] = partsOf(key);
  const h = key.length >= 16 ? Number(key.slice(11, 13)) : 0;
  const mi = key.length >= 16 ? Number(key.slice(14, 16)) : 0;
  return [y, m - 1, d, h, mi];
}

// ---- time zones ----

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
    } catch {
      throw new Error(`invalid time zone '${timeZone}'`);
    }
    if (formatters.size > 500) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock in `timeZone` at instant `ms`, as a UTC timestamp with the same fields (second precision). */
function wallClock(ms: number, timeZone: string): number {
  const fields: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(ms))) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  return utc(fields.year ?? 1970, (fields.month ?? 1) - 1, fields.day ?? 1, fields.hour ?? 0, fields.minute ?? 0, fields.second ?? 0);
}

/** `YYYY-MM-DD` of instant `ms` in `timeZone`. */
export function localDayKey(ms: number, timeZone: string): string {
  return keyOfEpochDay(Math.floor(wallClock(ms, timeZone) / DAY_MS));
}

/**
 * The first instant whose wall clock in `timeZone` is at or after the local time `key` (day keys mean 00:00).
 * In a DST overlap that is the earlier occurrence; in a DST gap, the moment the clock jumps past it.
 */
export function instantOfLocal(key: string, timeZone: string): number {
  const local = utc(...minuteParts(key));
  const offsetAt = (ms: number) => wallClock(ms, timeZone) - Math.floor(ms / 1000) * 1000;
  const candidates = [local - offsetAt(local - DAY_MS), local - offsetAt(local), local - offsetAt(local + DAY_MS)];
  const exact = candidates.filter((t) => wallClock(t, timeZone) === local);
  if (exact.length > 0) return Math.min(...exact);
  // A gap: the wall clock skips `local`; search the jump between the candidates, to the second.
  let lo = Math.min(...candidates);
  let hi = Math.max(...candidates);
  if (wallClock(lo, timeZone) >= local) return lo;
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (wallClock(mid, timeZone) >= local) hi = mid;
    else lo = mid;
  }
  return hi;
}
