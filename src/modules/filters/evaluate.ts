/** In-memory evaluation of a filter against one stored row. Pure; mirrors `to-sql.ts` leaf by leaf. */
import { DAY_KEY, MINUTE_KEY } from './dates.js';
import { resolveCondition } from './resolve.js';
import { asciiLower } from './text.js';
import type { CompiledFilter, Condition, FilterContext, Source, StoredRow } from './types.js';

// Resolving dates costs a few Intl calls; callers scanning many rows reuse one context, so remember the last one.
const resolved = new WeakMap<CompiledFilter, { key: string; condition: Condition | null }>();

export function resolvedFor(filter: CompiledFilter, ctx: FilterContext): Condition | null {
  const key = `${ctx.now}|${ctx.timeZone}|${ctx.currentUser ?? ''}`;
  const cached = resolved.get(filter);
  if (cached && cached.key === key) return cached.condition;
  const condition = resolveCondition(filter.root, ctx);
  resolved.set(filter, { key, condition });
  return condition;
}

export function matchesRow(filter: CompiledFilter, row: StoredRow, ctx: FilterContext): boolean {
  const condition = resolvedFor(filter, ctx);
  return condition === null || evaluate(condition, row);
}

function cellValue(row: StoredRow, key: string): unknown {
  const data = row.data;
  return data !== null && typeof data === 'object' && Object.hasOwn(data, key) ? data[key] : undefined;
}

function sourceValue(row: StoredRow, src: Source): unknown {
  if (src.kind === 'cell') return cellValue(row, src.key);
  if (src.kind === 'user') return src.field === 'creator' ? row._creator : row._last_modifier;
  return src.field === 'ctime' ? row._ctime : row._mtime;
}

export function isEmptyValue(value: unknown): boolean {
  return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

function stringElements(value: unknown): string[] | null {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : null;
}

/** The comparable key of a date cell: `YYYY-MM-DD`, or `YYYY-MM-DD HH:mm` (a bare date counting as 00:00). */
function dateKey(value: string, unit: 'day' | 'minute'): string {
  if (unit === 'day') return value.slice(0, 10);
  return MINUTE_KEY.test(value) ? value.slice(0, 16) : `${value.slice(0, 10)} 00:00`;
}

export function evaluate(condition: Condition, row: StoredRow): boolean {
  switch (condition.op) {
    case 'and':
      return condition.items.every((c) => evaluate(c, row));
    case 'or':
      return condition.items.some((c) => evaluate(c, row));
    case 'not':
      return !evaluate(condition.item, row);
    case 'const':
      return condition.value;
    case 'empty': {
      const value = sourceValue(row, condition.src);
      if (condition.src.kind === 'time') return typeof value !== 'number';
      return isEmptyValue(value);
    }
    case 'textContains': {
      const value = cellValue(row, condition.key);
      return typeof value === 'string' && asciiLower(value).includes(condition.folded);
    }
    case 'oneOf': {
      const value = sourceValue(row, condition.src);
      return typeof value === 'string' && condition.values.includes(value);
    }
    case 'numCompare': {
      const value = cellValue(row, condition.key);
      if (typeof value !== 'number') return false;
      switch (condition.cmp) {
        case '=':
          return value === condition.value;
        case '<':
          return value < condition.value;
        case '<=':
          return value <= condition.value;
        case '>':
          return value > condition.value;
        default:
          return value >= condition.value;
      }
    }
    case 'isTrue':
      return cellValue(row, condition.key) === true;
    case 'hasAny': {
      const elements = stringElements(cellValue(row, condition.key));
      return elements !== null && elements.some((e) => condition.values.includes(e));
    }
    case 'hasAll': {
      const elements = stringElements(cellValue(row, condition.key));
      return elements !== null && condition.values.every((v) => elements.includes(v));
    }
    case 'hasExactly': {
      const value = cellValue(row, condition.key);
      if (!Array.isArray(value)) return false;
      const elements = stringElements(value) ?? [];
      return (
        elements.length === value.length &&
        elements.every((e) => condition.values.includes(e)) &&
        condition.values.every((v) => elements.includes(v))
      );
    }
    case 'dateValid': {
      const value = cellValue(row, condition.key);
      return typeof value === 'string' && DAY_KEY.test(value);
    }
    case 'dateKeyRange': {
      const value = cellValue(row, condition.key);
      if (typeof value !== 'string' || !DAY_KEY.test(value)) return false;
      const key = dateKey(value, condition.unit);
      return (condition.from === null || key >= condition.from) && (condition.to === null || key <= condition.to);
    }
    case 'timeRange': {
      const value = sourceValue(row, { kind: 'time', field: condition.field });
      return (
        typeof value === 'number' &&
        (condition.from === null || value >= condition.from) &&
        (condition.until === null || value < condition.until)
      );
    }
  }
}
