import { partsIn, rfc3339, zonedMs } from './calendar.js';

/**
 * Values a formula computes with. Dates are instants (`FormulaDate`); empty cells are `null`;
 * multi-valued cells (multiple select, collaborators, lookups) are arrays.
 */
export class FormulaDate {
  constructor(readonly ms: number) {}
}

export type Value = number | string | boolean | FormulaDate | null | Value[];

export type ResultType = 'number' | 'string' | 'date' | 'bool' | 'array';

/** A value a formula cannot use where it is (`#VALUE!`); the whole formula is then empty for the row. */
export class FormulaValueError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'FormulaValueError';
  }
}

export interface EvalContext {
  /** The instant of the write (for `now()` and `today()`). */
  now: number;
  /** IANA zone of calendar functions (TIME_ZONE). */
  timeZone: string;
}

export const isBlank = (v: Value): boolean => v === null || v === '' || (Array.isArray(v) && v.every(isBlank));

export function toNumber(v: Value): number {
  if (v === null) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const text = v.trim();
    if (text === '') return 0;
    const n = Number(text.replace(/,/g, ''));
    if (!Number.isFinite(n)) throw new FormulaValueError(`'${v}' is not a number`);
    return n;
  }
  if (Array.isArray(v)) {
    if (v.length === 0) return 0;
    if (v.length === 1) return toNumber(v[0]!);
  }
  throw new FormulaValueError('not a number');
}

function numberText(n: number): string {
  if (Number.isInteger(n)) return String(n);
  // 15 significant digits hide binary noise (0.1 + 0.2 → 0.3) as spreadsheets do.
  return String(Number(n.toPrecision(15)));
}

/** Text of a value; dates show as `YYYY-MM-DD` (with ` HH:mm` when not midnight) in the zone. */
export function toText(v: Value, timeZone: string): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return numberText(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof FormulaDate) return dateText(v.ms, timeZone);
  return v.filter((x) => !isBlank(x)).map((x) => toText(x, timeZone)).join(', ');
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export function dateText(ms: number, timeZone: string): string {
  const p = partsIn(ms, timeZone);
  const day = `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}`;
  return p.hour === 0 && p.minute === 0 && p.second === 0 ? day : `${day} ${pad(p.hour)}:${pad(p.minute)}`;
}

export function toBool(v: Value): boolean {
  if (v === null) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    return t !== '' && t !== 'false' && t !== '0';
  }
  if (v instanceof FormulaDate) return true;
  return v.some((x) => !isBlank(x));
}

const DATE_TEXT = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A date from a value: dates as they are; text `YYYY-MM-DD[ HH:mm[:ss]]` is a wall-clock time in the
 * zone unless it carries an offset (`Z`, `+02:00`). Stored date cells with a time are UTC (see
 * docs/base-data.md) and are turned into dates by the cell reader, not here.
 */
export function toDate(v: Value, timeZone: string): FormulaDate | null {
  if (v === null || v === '') return null;
  if (v instanceof FormulaDate) return v;
  if (Array.isArray(v) && v.length === 1) return toDate(v[0]!, timeZone);
  if (typeof v !== 'string') throw new FormulaValueError('not a date');
  const m = DATE_TEXT.exec(v.trim());
  if (!m) throw new FormulaValueError(`'${v}' is not a date`);
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) throw new FormulaValueError(`'${v}' is not a date`);
  const zone = m[7];
  if (!zone) return new FormulaDate(zonedMs(timeZone, y, mo - 1, d, h, mi, s));
  let ms = Date.UTC(y, mo - 1, d, h, mi, s);
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const offset = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2));
    ms -= (zone.startsWith('-') ? -1 : 1) * offset * 60_000;
  }
  return new FormulaDate(ms);
}

export function requireDate(v: Value, timeZone: string): FormulaDate {
  const d = toDate(v, timeZone);
  if (!d) throw new FormulaValueError('empty date');
  return d;
}

/** Items of the arguments of an aggregate (arrays spread). */
export function flatten(args: Value[]): Value[] {
  return args.flatMap((a) => (Array.isArray(a) ? flatten(a) : [a]));
}

/**
 * The cell a formula column stores for its result: the value converted to the column's result type;
 * empty, non-finite or unconvertible results are stored as no cell (null).
 */
export function toCell(v: Value, type: ResultType, timeZone: string): unknown {
  try {
    switch (type) {
      case 'number': {
        if (isBlank(v)) return null;
        const n = toNumber(v);
        return Number.isFinite(n) ? n : null;
      }
      case 'bool':
        return v === null ? null : toBool(v);
      case 'date': {
        const d = toDate(v, timeZone);
        return d && Number.isFinite(d.ms) ? rfc3339(d.ms, timeZone) : null;
      }
      case 'array': {
        const items = (Array.isArray(v) ? flatten(v) : [v]).filter((x) => !isBlank(x)).map((x) => (typeof x === 'number' || typeof x === 'boolean' ? x : toText(x, timeZone)));
        return items.length === 0 ? null : items;
      }
      case 'string': {
        const text = toText(v, timeZone);
        return text === '' ? null : text;
      }
    }
  } catch (e) {
    if (e instanceof FormulaValueError) return null;
    throw e;
  }
}
