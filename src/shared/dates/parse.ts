import { instantOf, timeZone, wallClockAt, type WallClock } from './zone.js';

/**
 * Dates as written: ISO dates and date-times with or without offset, and the display formats
 * (`YYYY/MM/DD`, `M/D/YYYY`, `DD/MM/YYYY`, `DD.MM.YYYY`, each with an optional ` HH:mm`), stored as
 * the wall clock in TIME_ZONE: `YYYY-MM-DD` or `YYYY-MM-DD HH:mm` (seconds dropped, as the original).
 * A value with an offset is converted into the zone; without one it is the zone's wall clock already.
 */

const CANONICAL_DAY = /^\d{4}-\d{2}-\d{2}$/;
const DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const DATE_TIME = /^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function validDay(y: number, m: number, d: number): boolean {
  if (y < 1 || y > 9999) return false;
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d);
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

function dayText(w: Pick<WallClock, 'year' | 'month' | 'day'>): string {
  return `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`;
}

function minuteText(w: WallClock): string {
  return `${dayText(w)} ${pad(w.hour)}:${pad(w.minute)}`;
}

/** Minutes east of UTC of `Z`, `+02`, `+0200`, `+02:00`; null beyond ±14:00. */
function offsetOf(zone: string): number | null {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0);
  return minutes > 14 * 60 || Number(digits.slice(2) || 0) > 59 ? null : sign * minutes;
}

export interface DateInputOptions {
  /** The column shows days only: a written date-time with an offset keeps its written calendar day. */
  dateOnly?: boolean;
  /** The column's display format (`DD/MM/YYYY …` makes `1/2/2030` day-first). */
  format?: string;
}

/** The stored form of a written date, or null when it is no valid date. */
export function parseDateInput(input: string, options: DateInputOptions = {}): string | null {
  // The stored form itself (most written dates, e.g. a bulk append): no display format can match it.
  if (input.length === 10 && CANONICAL_DAY.test(input)) {
    return validDay(Number(input.slice(0, 4)), Number(input.slice(5, 7)), Number(input.slice(8, 10))) ? input : null;
  }
  const trimmed = input.trim();
  const text = fromDisplayFormat(trimmed, options.format ?? 'YYYY-MM-DD') ?? trimmed;
  const day = DATE.exec(text);
  if (day) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    return validDay(y, m, d) ? dayText({ year: y, month: m, day: d }) : null;
  }
  const dt = DATE_TIME.exec(text);
  if (!dt) return null;
  const [y, m, d, hh, mm, ss] = [Number(dt[1]), Number(dt[2]), Number(dt[3]), Number(dt[4]), Number(dt[5]), Number(dt[6] ?? 0)];
  if (!validDay(y, m, d) || hh > 23 || mm > 59 || ss > 59) return null;
  const zone = dt[8];
  if (zone !== undefined) {
    const offset = offsetOf(zone);
    if (offset === null) return null;
    // The calendar day as written is what a day-only column keeps; a conversion must not move it.
    if (options.dateOnly) return dayText({ year: y, month: m, day: d });
    const instant = Date.UTC(y, m - 1, d, hh, mm) - offset * 60_000;
    return minuteText(wallClockAt(instant));
  }
  // A wall-clock time the zone skips (spring forward) becomes the time it names after the jump.
  const wall: WallClock = { year: y, month: m, day: d, hour: hh, minute: mm, second: 0 };
  return minuteText(timeZone() === 'UTC' ? wall : wallClockAt(instantOf(wall)));
}

/**
 * A date in one of the display formats as `YYYY-MM-DD[ HH:mm]`; a slash date with the year last is
 * day-first only when the column's format is. Null when the text is in none of them.
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
