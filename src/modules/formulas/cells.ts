import { instantOf } from '../../shared/dates/index.js';
import { FormulaDate, toDate, type ResultType, type Value } from './values.js';

/**
 * How formulas see the cells of each column type, and the result type a reference to that column has.
 * Stored date cells are `YYYY-MM-DD` (a calendar day: midnight in TIME_ZONE) or `YYYY-MM-DD HH:mm`
 * (the wall clock in TIME_ZONE, as the rows module stores them); row timestamps are epoch milliseconds.
 */

const NUMBER_TYPES = ['number', 'rate', 'duration'];
const DATE_TYPES = ['date', 'ctime', 'mtime'];
const LIST_TYPES = ['multiple-select', 'collaborator', 'file', 'image'];

/** The type a reference to a column of this type (and formula result type, for formula columns) gives. */
export function referenceType(columnType: string, resultType?: unknown): ResultType {
  if ((columnType === 'formula' || columnType === 'link-formula') && typeof resultType === 'string') return resultType as ResultType;
  if (NUMBER_TYPES.includes(columnType)) return 'number';
  if (DATE_TYPES.includes(columnType)) return 'date';
  if (columnType === 'checkbox') return 'bool';
  if (LIST_TYPES.includes(columnType) || columnType === 'link') return 'array';
  return 'string';
}

const STORED_MINUTE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2})$/;

/** A stored cell (or row timestamp in ms for ctime/mtime) as a formula value. */
export function cellToValue(columnType: string, raw: unknown, timeZone: string, type: ResultType = referenceType(columnType)): Value {
  if (raw === undefined || raw === null) return null;
  if (columnType === 'ctime' || columnType === 'mtime') return typeof raw === 'number' ? new FormulaDate(raw) : null;
  if (type === 'date') {
    if (typeof raw !== 'string') return null;
    const m = STORED_MINUTE.exec(raw);
    if (m) return new FormulaDate(instantOf({ year: Number(m[1]), month: Number(m[2]), day: Number(m[3]), hour: Number(m[4]), minute: Number(m[5]), second: 0 }, timeZone));
    try {
      return toDate(raw, timeZone);
    } catch {
      return null;
    }
  }
  if (typeof raw === 'number' || typeof raw === 'string' || typeof raw === 'boolean') return raw;
  if (Array.isArray(raw)) return raw.map((item) => (typeof item === 'object' && item !== null ? String((item as { name?: unknown; display_value?: unknown }).name ?? (item as { display_value?: unknown }).display_value ?? '') : (item as Value)));
  if (typeof raw === 'object') return JSON.stringify(raw);
  return null;
}
