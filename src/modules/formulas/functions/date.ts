import { dayDiff, daysInMonth, partsIn, startOfDay, utcMs, zonedMs } from '../calendar.js';
import { FormulaDate, FormulaValueError, flatten, isBlank, requireDate, toText, type EvalContext, type Value } from '../values.js';
import { num } from './math.js';
import { arg, VARIADIC, type FunctionDef } from './types.js';

const date = (a: Value[], i: number, ctx: EvalContext) => requireDate(arg(a, i), ctx.timeZone).ms;
const parts = (a: Value[], i: number, ctx: EvalContext) => partsIn(date(a, i, ctx), ctx.timeZone);
const part = (pick: (p: ReturnType<typeof partsIn>) => number): FunctionDef => ({ min: 1, max: 1, result: 'number', fn: (a, ctx) => pick(parts(a, 0, ctx)) });
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Calendar shift in the zone; months clamp the day (Jan 31 + 1 month → Feb 28/29). */
export function addMonths(ms: number, months: number, timeZone: string): number {
  const p = partsIn(ms, timeZone);
  const index = p.year * 12 + (p.month - 1) + months;
  const y = Math.floor(index / 12);
  const m = index - y * 12;
  return zonedMs(timeZone, y, m, Math.min(p.day, daysInMonth(y, m + 1)), p.hour, p.minute, p.second);
}

function addDays(ms: number, days: number, timeZone: string): number {
  const p = partsIn(ms, timeZone);
  return zonedMs(timeZone, p.year, p.month - 1, p.day + days, p.hour, p.minute, p.second);
}

const UNITS: Record<string, (ms: number, n: number, tz: string) => number> = {
  years: (ms, n, tz) => addMonths(ms, n * 12, tz),
  months: (ms, n, tz) => addMonths(ms, n, tz),
  weeks: (ms, n, tz) => addDays(ms, n * 7, tz),
  days: (ms, n, tz) => addDays(ms, n, tz),
  hours: (ms, n) => ms + n * 3_600_000,
  minutes: (ms, n) => ms + n * 60_000,
  seconds: (ms, n) => ms + n * 1000,
};

function unitOf(raw: string): string {
  const u = raw.trim().toLowerCase();
  const plural = u.endsWith('s') ? u : `${u}s`;
  if (!UNITS[plural]) throw new FormulaValueError(`unknown unit '${raw}'`);
  return plural;
}

/** Whole months from a to b (a ≤ b), counting a month only when its day is reached. */
function wholeMonths(a: number, b: number, tz: string): number {
  const pa = partsIn(a, tz);
  const pb = partsIn(b, tz);
  let months = (pb.year - pa.year) * 12 + (pb.month - pa.month);
  if (pb.day < pa.day || (pb.day === pa.day && pb.hour * 3600 + pb.minute * 60 + pb.second < pa.hour * 3600 + pa.minute * 60 + pa.second)) months--;
  return months;
}

/** Excel's DATEDIF units: Y, M, D, MD, YM, YD; also H, m (minutes), S. Negative when end is before start. */
function dateDif(start: number, end: number, rawUnit: string, tz: string): number {
  if (end < start) return -dateDif(end, start, rawUnit, tz);
  const unit = rawUnit.trim();
  switch (unit.toUpperCase()) {
    case 'Y':
      return Math.floor(wholeMonths(start, end, tz) / 12);
    case 'M':
      return wholeMonths(start, end, tz);
    case 'D':
      return dayDiff(start, end, tz);
    case 'MD': {
      const months = wholeMonths(start, end, tz);
      return dayDiff(addMonths(start, months, tz), end, tz);
    }
    case 'YM':
      return wholeMonths(start, end, tz) % 12;
    case 'YD': {
      const years = Math.floor(wholeMonths(start, end, tz) / 12);
      return dayDiff(addMonths(start, years * 12, tz), end, tz);
    }
    case 'H':
      return Math.floor((end - start) / 3_600_000);
    case 'S':
      return Math.floor((end - start) / 1000);
    default:
      if (unit === 'm') return Math.floor((end - start) / 60_000);
      throw new FormulaValueError(`unknown unit '${rawUnit}'`);
  }
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

function weekStart(a: Value[], i: number, ctx: EvalContext): number {
  if (i >= a.length || isBlank(arg(a, i))) return 0;
  const name = toText(arg(a, i), ctx.timeZone).trim().toLowerCase();
  const index = WEEKDAYS.indexOf(name);
  if (index !== 0 && index !== 1) throw new FormulaValueError(`week start must be Sunday or Monday, not '${name}'`);
  return index;
}

/** ISO 8601 week number of a calendar day. */
export function isoWeek(y: number, m: number, d: number): number {
  const t = new Date(utcMs(y, m - 1, d));
  const day = t.getUTCDay() || 7;
  t.setUTCDate(t.getUTCDate() + 4 - day);
  const yearStart = utcMs(t.getUTCFullYear(), 0, 1);
  return Math.ceil(((t.getTime() - yearStart) / 86_400_000 + 1) / 7);
}

function holidays(a: Value[], from: number, ctx: EvalContext): Set<string> {
  return new Set(flatten(a.slice(from)).filter((v) => !isBlank(v)).map((v) => dayKey(requireDate(v, ctx.timeZone).ms, ctx.timeZone)));
}

function dayKey(ms: number, tz: string): string {
  const p = partsIn(ms, tz);
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}`;
}

const MAX_DAY_SPAN = 366 * 200;

/** Working days (Monday–Friday, not holidays) from start to end inclusive; negative when end is earlier. */
function networkdays(start: number, end: number, off: Set<string>, tz: string): number {
  if (end < start) return -networkdays(end, start, off, tz);
  const span = dayDiff(start, end, tz);
  if (span > MAX_DAY_SPAN) throw new FormulaValueError('date range too long');
  const p = partsIn(start, tz);
  let count = 0;
  for (let i = 0; i <= span; i++) {
    const t = new Date(utcMs(p.year, p.month - 1, p.day + i));
    const key = t.toISOString().slice(0, 10);
    const wd = t.getUTCDay();
    if (wd !== 0 && wd !== 6 && !off.has(key)) count++;
  }
  return count;
}

/** The working day `days` working days after (or before) start. */
function workday(start: number, days: number, off: Set<string>, tz: string): number {
  if (Math.abs(days) > MAX_DAY_SPAN) throw new FormulaValueError('date range too long');
  const p = partsIn(start, tz);
  const step = days < 0 ? -1 : 1;
  let left = Math.abs(Math.trunc(days));
  let i = 0;
  while (left > 0) {
    i += step;
    const t = new Date(utcMs(p.year, p.month - 1, p.day + i));
    const wd = t.getUTCDay();
    if (wd !== 0 && wd !== 6 && !off.has(t.toISOString().slice(0, 10))) left--;
  }
  return zonedMs(tz, p.year, p.month - 1, p.day + i);
}

export const DATE_FUNCTIONS: Record<string, FunctionDef> = {
  date: {
    min: 3,
    max: 6,
    result: 'date',
    fn: (a, ctx) => {
      const [y, m, d, h, mi, s] = [0, 1, 2, 3, 4, 5].map((i) => Math.trunc(num(a, i, 0))) as [number, number, number, number, number, number];
      if (y < 1 || y > 9999) throw new FormulaValueError('year out of range');
      return new FormulaDate(zonedMs(ctx.timeZone, y, m - 1, d, h, mi, s));
    },
  },
  today: { min: 0, max: 0, result: 'date', fn: (_a, ctx) => new FormulaDate(startOfDay(ctx.now, ctx.timeZone)) },
  now: { min: 0, max: 0, result: 'date', fn: (_a, ctx) => new FormulaDate(ctx.now) },
  dateadd: {
    min: 2,
    max: 3,
    result: 'date',
    fn: (a, ctx) => {
      const unit = a.length > 2 ? unitOf(toText(arg(a, 2), ctx.timeZone)) : 'days';
      return new FormulaDate(UNITS[unit]!(date(a, 0, ctx), Math.trunc(num(a, 1)), ctx.timeZone));
    },
  },
  datedif: { min: 2, max: 3, result: 'number', fn: (a, ctx) => dateDif(date(a, 0, ctx), date(a, 1, ctx), a.length > 2 ? toText(arg(a, 2), ctx.timeZone) : 'D', ctx.timeZone) },
  day: part((p) => p.day),
  month: part((p) => p.month),
  year: part((p) => p.year),
  hour: part((p) => p.hour),
  minute: part((p) => p.minute),
  second: part((p) => p.second),
  quarter: part((p) => Math.ceil(p.month / 3)),
  /** 1–7 from the week's first day (Sunday by default, or 'Monday'). */
  weekday: { min: 1, max: 2, result: 'number', fn: (a, ctx) => ((parts(a, 0, ctx).weekday - weekStart(a, 1, ctx) + 7) % 7) + 1 },
  /** Week of the year, week 1 holding January 1st; weeks start on Sunday (return type 1) or Monday (2). */
  weeknum: {
    min: 1,
    max: 2,
    result: 'number',
    fn: (a, ctx) => {
      const p = parts(a, 0, ctx);
      const type = Math.trunc(num(a, 1, 1));
      if (type !== 1 && type !== 2) throw new FormulaValueError('return type must be 1 or 2');
      const first = new Date(utcMs(p.year, 0, 1)).getUTCDay();
      const offset = (first - (type === 2 ? 1 : 0) + 7) % 7;
      const dayOfYear = Math.round((utcMs(p.year, p.month - 1, p.day) - utcMs(p.year, 0, 1)) / 86_400_000);
      return Math.floor((dayOfYear + offset) / 7) + 1;
    },
  },
  isoweeknum: {
    min: 1,
    max: 1,
    result: 'number',
    fn: (a, ctx) => {
      const p = parts(a, 0, ctx);
      return isoWeek(p.year, p.month, p.day);
    },
  },
  isodate: { min: 1, max: 1, result: 'string', fn: (a, ctx) => dayKey(date(a, 0, ctx), ctx.timeZone) },
  isomonth: { min: 1, max: 1, result: 'string', fn: (a, ctx) => dayKey(date(a, 0, ctx), ctx.timeZone).slice(0, 7) },
  startofweek: {
    min: 1,
    max: 2,
    result: 'date',
    fn: (a, ctx) => {
      const p = parts(a, 0, ctx);
      const back = (p.weekday - weekStart(a, 1, ctx) + 7) % 7;
      return new FormulaDate(zonedMs(ctx.timeZone, p.year, p.month - 1, p.day - back));
    },
  },
  eomonth: {
    min: 2,
    max: 2,
    result: 'date',
    fn: (a, ctx) => {
      const p = parts(a, 0, ctx);
      const index = p.year * 12 + (p.month - 1) + Math.trunc(num(a, 1));
      const y = Math.floor(index / 12);
      const m = index - y * 12;
      return new FormulaDate(zonedMs(ctx.timeZone, y, m, daysInMonth(y, m + 1)));
    },
  },
  networkdays: { min: 2, max: VARIADIC, result: 'number', fn: (a, ctx) => networkdays(date(a, 0, ctx), date(a, 1, ctx), holidays(a, 2, ctx), ctx.timeZone) },
  workday: { min: 2, max: VARIADIC, result: 'date', fn: (a, ctx) => new FormulaDate(workday(date(a, 0, ctx), num(a, 1), holidays(a, 2, ctx), ctx.timeZone)) },
};
