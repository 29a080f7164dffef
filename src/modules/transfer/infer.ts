import { badRequest } from '../../shared/errors.js';
import type { RawCell } from './import-source.js';

/** What an imported column becomes, and how its cells convert. */
export interface ColumnPlan {
  name: string;
  type: ColumnType;
  data?: Record<string, unknown>;
  /** The types every cell of the file's column converts to (the first pass's finding; a mapping may pick one). */
  types?: ColumnType[];
  /** The file's column name, when the column is imported under another name (a mapping). */
  source?: string;
}

export type ColumnType = 'text' | 'number' | 'date' | 'checkbox' | 'single-select';

const MAX_OPTIONS = 10;
const TRUE = new Set(['true', 'yes', 'ja', 'x', '✓']);
const FALSE = new Set(['false', 'no', 'nein', '']);
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const DATES: Array<[RegExp, (m: RegExpExecArray) => string]> = [
  [/^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/, (m) => iso(m[1]!, m[2]!, m[3]!, m[4], m[5])],
  [/^(\d{4})\/(\d{1,2})\/(\d{1,2})(?: (\d{1,2}):(\d{2}))?$/, (m) => iso(m[1]!, m[2]!, m[3]!, m[4], m[5])],
  [/^(\d{1,2})\.(\d{1,2})\.(\d{4})(?: (\d{1,2}):(\d{2}))?$/, (m) => iso(m[3]!, m[2]!, m[1]!, m[4], m[5])],
  [/^(\d{1,2})\/(\d{1,2})\/(\d{4})(?: (\d{1,2}):(\d{2}))?$/, (m) => iso(m[3]!, m[1]!, m[2]!, m[4], m[5])],
];

function iso(y: string, mo: string, d: string, h?: string, mi?: string): string {
  const date = `${y}-${mo.padStart(2, '0')}-${d.padStart(2, '0')}`;
  return h === undefined ? date : `${date} ${h.padStart(2, '0')}:${mi}`;
}

/** A date cell as `YYYY-MM-DD[ HH:mm]` (what the rows API takes), or null when the text is no date. */
export function dateText(value: RawCell): string | null {
  if (value instanceof Date) {
    const s = value.toISOString();
    return s.endsWith('T00:00:00.000Z') ? s.slice(0, 10) : `${s.slice(0, 10)} ${s.slice(11, 16)}`;
  }
  if (typeof value !== 'string') return null;
  for (const [pattern, build] of DATES) {
    const m = pattern.exec(value.trim());
    if (m) {
      const text = build(m);
      const [y, mo, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
      const check = new Date(Date.UTC(y, mo - 1, d));
      if (check.getUTCMonth() === mo - 1 && check.getUTCDate() === d) return text;
      return null;
    }
  }
  return null;
}

/** A text that a spreadsheet would run as a formula (`=…`, `@…`, or `+`/`-` not starting a number). */
export function looksLikeFormula(text: string): boolean {
  if (text.startsWith('=') || text.startsWith('@')) return true;
  return (text.startsWith('+') || text.startsWith('-')) && text.length > 1 && !NUMBER.test(text.trim());
}

/** Per-column observations of the first pass over a file. */
export class ColumnStats {
  filled = 0;
  numbers = 0;
  dates = 0;
  checks = 0;
  hasTime = false;
  readonly distinct = new Set<string>();

  observe(value: RawCell): void {
    if (value === null || value === '') return;
    // A type one earlier cell already ruled out is not tested again (a text column costs little).
    const seen = this.filled++;
    if (this.numbers === seen && (typeof value === 'number' || (typeof value === 'string' && NUMBER.test(value.trim())))) this.numbers++;
    if (this.dates === seen) {
      const date = dateText(value);
      if (date !== null) {
        this.dates++;
        if (date.length > 10) this.hasTime = true;
      }
    }
    if (this.checks === seen && (typeof value === 'boolean' || (typeof value === 'string' && (TRUE.has(value.trim().toLowerCase()) || FALSE.has(value.trim().toLowerCase()))))) this.checks++;
    if (this.distinct.size <= MAX_OPTIONS) this.distinct.add(String(value));
  }

  /** The types all of the column's cells convert to (text always; a single select of at most 10 options). */
  fits(): ColumnType[] {
    const n = this.filled;
    const types: ColumnType[] = ['text'];
    if (n > 0 && this.numbers === n) types.push('number');
    if (n > 0 && this.dates === n) types.push('date');
    if (n > 0 && this.checks === n) types.push('checkbox');
    if (this.distinct.size <= MAX_OPTIONS) types.push('single-select');
    return types;
  }

  plan(name: string): ColumnPlan {
    const n = this.filled;
    if (n === 0) return { name, type: 'text' };
    if (this.checks === n) return { name, type: 'checkbox' };
    if (this.numbers === n) return { name, type: 'number' };
    if (this.dates === n) return { name, type: 'date', data: { format: this.hasTime ? 'YYYY-MM-DD HH:mm' : 'YYYY-MM-DD' } };
    // Few distinct values, each used several times: a single select.
    if (this.distinct.size <= MAX_OPTIONS && n >= 3 * this.distinct.size) return { name, type: 'single-select' };
    return { name, type: 'text' };
  }
}

/** The column names of a header row: not empty, unique (a repeat gets ` (2)`), at most 255 characters. */
export function headerNames(header: string[]): string[] {
  const seen = new Set<string>();
  return header.map((raw, i) => {
    let name = raw.trim().slice(0, 255) || `Column ${i + 1}`;
    if (looksLikeFormula(name)) throw badRequest(`Row 1: column name ${i + 1} holds a formula.`);
    for (let n = 2; seen.has(name); n++) name = `${raw.trim() || `Column ${i + 1}`} (${n})`;
    seen.add(name);
    return name;
  });
}

/** A raw cell as the rows API takes it for the planned column type. */
export function convertCell(plan: ColumnPlan, value: RawCell): unknown {
  if (value === null || value === '') return undefined;
  switch (plan.type) {
    case 'number':
      return typeof value === 'number' ? value : Number(String(value).trim());
    case 'checkbox':
      return typeof value === 'boolean' ? value : TRUE.has(String(value).trim().toLowerCase());
    case 'date':
      return dateText(value) ?? undefined;
    default:
      return value instanceof Date ? (dateText(value) ?? String(value)) : String(value);
  }
}
