/**
 * Wall-clock arithmetic in an IANA time zone (the configured TIME_ZONE): an instant's calendar parts
 * there, and the instant a wall-clock time there names. Pure; formatters are cached per zone.
 */

export interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** 0 = Sunday … 6 = Saturday */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Date.UTC without its trap of reading years 0–99 as 1900–1999. */
export function utcMs(y: number, monthIndex: number, d: number, h = 0, mi = 0, s = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(y, monthIndex, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}

export function partsIn(ms: number, timeZone: string): Parts {
  const out: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) if (p.type !== 'literal') out[p.type] = Number(p.value);
  const year = out.year!;
  const month = out.month!;
  const day = out.day!;
  const weekday = new Date(utcMs(year, month - 1, day)).getUTCDay();
  return { year, month, day, hour: out.hour!, minute: out.minute!, second: out.second!, weekday };
}

/** Minutes `timeZone` is ahead of UTC at the instant `ms`. */
export function offsetMinutes(ms: number, timeZone: string): number {
  const p = partsIn(ms, timeZone);
  const wall = utcMs(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
}

/**
 * The instant at which the wall clock in `timeZone` shows the given time (fields may overflow: month 13,
 * day 0 … are normalized). A time skipped by a DST jump resolves to the instant after the gap.
 */
export function zonedMs(timeZone: string, y: number, monthIndex: number, d: number, h = 0, mi = 0, s = 0): number {
  const wall = utcMs(y, monthIndex, d, h, mi, s);
  let ms = wall - offsetMinutes(wall, timeZone) * 60_000;
  const second = wall - offsetMinutes(ms, timeZone) * 60_000;
  if (second !== ms) ms = Math.max(ms, second);
  return ms;
}

/** Midnight of the calendar day containing `ms`, in `timeZone`. */
export function startOfDay(ms: number, timeZone: string): number {
  const p = partsIn(ms, timeZone);
  return zonedMs(timeZone, p.year, p.month - 1, p.day);
}

export function daysInMonth(y: number, month: number): number {
  return new Date(utcMs(y, month, 0)).getUTCDate();
}

/** Whole calendar days from the day of `a` to the day of `b` (in `timeZone`), DST-proof. */
export function dayDiff(a: number, b: number, timeZone: string): number {
  const pa = partsIn(a, timeZone);
  const pb = partsIn(b, timeZone);
  return Math.round((utcMs(pb.year, pb.month - 1, pb.day) - utcMs(pa.year, pa.month - 1, pa.day)) / 86_400_000);
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** RFC 3339 with the zone's offset at that instant: `2024-01-31T00:00:00+01:00`. */
export function rfc3339(ms: number, timeZone: string): string {
  const p = partsIn(ms, timeZone);
  const off = offsetMinutes(ms, timeZone);
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off);
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}
