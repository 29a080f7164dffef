/**
 * The calendar vocabulary formulas use, on top of the one wall-clock implementation in
 * src/shared/dates (so formulas, stored cells and answers agree on every DST edge): an instant's
 * calendar parts in a zone, the instant a wall-clock time names, and day arithmetic.
 */
import { instantOf, instantText, offsetMinutesAt, utcMs, wallClockAt, type WallClock } from '../../shared/dates/index.js';

export { utcMs };

export interface Parts extends WallClock {
  /** 0 = Sunday … 6 = Saturday */
  weekday: number;
}

export function partsIn(ms: number, timeZone: string): Parts {
  const w = wallClockAt(ms, timeZone);
  return { ...w, weekday: new Date(utcMs(w.year, w.month - 1, w.day)).getUTCDay() };
}

/** Minutes `timeZone` is ahead of UTC at the instant `ms`. */
export function offsetMinutes(ms: number, timeZone: string): number {
  return offsetMinutesAt(ms, timeZone);
}

/**
 * The instant at which the wall clock in `timeZone` shows the given time. Fields may overflow (month
 * 13, day 0 …) and are normalized first; a skipped or repeated time resolves as stored cells do.
 */
export function zonedMs(timeZone: string, y: number, monthIndex: number, d: number, h = 0, mi = 0, s = 0): number {
  const n = new Date(utcMs(y, monthIndex, d, h, mi, s));
  const wall = {
    year: n.getUTCFullYear(),
    month: n.getUTCMonth() + 1,
    day: n.getUTCDate(),
    hour: n.getUTCHours(),
    minute: n.getUTCMinutes(),
    second: n.getUTCSeconds(),
  };
  return instantOf(wall, timeZone);
}

/** Midnight of the calendar day containing `ms`, in `timeZone`. */
export function startOfDay(ms: number, timeZone: string): number {
  const p = wallClockAt(ms, timeZone);
  return zonedMs(timeZone, p.year, p.month - 1, p.day);
}

export function daysInMonth(y: number, month: number): number {
  return new Date(utcMs(y, month, 0)).getUTCDate();
}

/** Whole calendar days from the day of `a` to the day of `b` (in `timeZone`), DST-proof. */
export function dayDiff(a: number, b: number, timeZone: string): number {
  const pa = wallClockAt(a, timeZone);
  const pb = wallClockAt(b, timeZone);
  return Math.round((utcMs(pb.year, pb.month - 1, pb.day) - utcMs(pa.year, pa.month - 1, pa.day)) / 86_400_000);
}

/** RFC 3339 with the zone's offset at that instant: `2024-01-31T00:00:00+01:00`. */
export function rfc3339(ms: number, timeZone: string): string {
  return instantText(ms, timeZone);
}
