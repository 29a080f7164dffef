/**
 * Validates a filter document once and turns it into a condition tree. Never throws: any JSON input
 * yields `{ok: true}` or `{ok: false, error}`. Incomplete items (blank term, date predicate without a
 * modifier) are dropped, as the original drops them; a group left empty is dropped too.
 */
import { asciiLower } from './text.js';
import { DAY_COUNT_MODIFIERS, DAY_MODIFIERS, WITHIN_MODIFIERS, familyOf, predicatesOf, unsupportedPredicate, type Family } from './predicates.js';
import {
  FilterError,
  checkboxTerm,
  dayCountTerm,
  exactDateTerm,
  exactDateTimeTerm,
  isBlank,
  numberTerm,
  optionNames,
  stringList,
  textTerm,
} from './terms.js';
import type { CellSource, CompiledFilter, DatePredicate, FilterColumn, ParseResult, ParsedCondition, TimeSource, UserSource } from './types.js';

/** Nesting levels of groups below the top level. */
export const MAX_DEPTH = 10;
/** Filter items (leaves) in one document. */
export const MAX_ITEMS = 500;

interface State {
  columns: FilterColumn[];
  items: number;
  keys: Set<string>;
  usesCurrentUser: boolean;
}

type Item = Record<string, unknown>;

const isObject = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `spec` is normally a `FilterSpec`, but anything a client sent is accepted and checked. */
export function parseFilters(spec: unknown, columns: FilterColumn[]): ParseResult {
  try {
    if (!isObject(spec)) throw new FilterError('filters invalid');
    const state: State = { columns: Array.isArray(columns) ? columns : [], items: 0, keys: new Set(), usesCurrentUser: false };
    const root = parseGroup(spec, 0, state);
    const filter: CompiledFilter = { root, columnKeys: [...state.keys], usesCurrentUser: state.usesCurrentUser };
    return { ok: true, filter };
  } catch (error) {
    if (error instanceof FilterError) return { ok: false, error: error.message };
    // Only a bug could get here; still never let bad input escape as an exception.
    return { ok: false, error: 'filters invalid' };
  }
}

function conjunctionOf(value: unknown): 'and' | 'or' {
  if (value === undefined || value === null || value === '') return 'and';
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    if (lower === 'and' || lower === 'or') return lower;
  }
  throw new FilterError('filter_conjunction invalid');
}

function parseGroup(group: Item, depth: number, state: State): ParsedCondition | null {
  const op = conjunctionOf(group.filter_conjunction);
  const filters = group.filters ?? [];
  if (!Array.isArray(filters)) throw new FilterError('filters invalid: filters must be a list');
  const items: ParsedCondition[] = [];
  for (const item of filters) {
    if (!isObject(item)) throw new FilterError('filters invalid: each filter must be an object');
    let condition: ParsedCondition | null;
    if (Array.isArray(item.filters)) {
      if (depth + 1 > MAX_DEPTH) throw new FilterError(`filters invalid: groups nested deeper than ${MAX_DEPTH} levels`);
      condition = parseGroup(item, depth + 1, state);
    } else {
      condition = parseItem(item, state);
    }
    if (condition) items.push(condition);
  }
  if (items.length === 0) return null;
  if (items.length === 1) return items[0] ?? null;
  return { op, items };
}

function findColumn(item: Item, columns: FilterColumn[]): FilterColumn {
  const key = typeof item.column_key === 'string' && item.column_key !== '' ? item.column_key : null;
  const name = typeof item.column_name === 'string' && item.column_name !== '' ? item.column_name : null;
  if (key === null && name === null) throw new FilterError('filters invalid: a filter needs column_key or column_name');
  const column = (key !== null ? columns.find((c) => c?.key === key) : undefined) ?? (name !== null ? columns.find((c) => c?.name === name) : undefined);
  if (!column) throw new FilterError(`column ${name ?? key} not found`);
  return column;
}

function parseItem(item: Item, state: State): ParsedCondition | null {
  const column = findColumn(item, state.columns);
  state.items += 1;
  if (state.items > MAX_ITEMS) throw new FilterError(`filters invalid: more than ${MAX_ITEMS} filters`);
  const type = typeof column.type === 'string' ? column.type : String(column.type);
  const family = familyOf(type, column.data);
  const available = predicatesOf(family);
  const predicate = typeof item.filter_predicate === 'string' ? item.filter_predicate : String(item.filter_predicate ?? '');
  if (!family || !available.includes(predicate)) throw new FilterError(unsupportedPredicate(column.name, type, predicate, available));
  // The key reaches SQL as a bound JSON path `$."key"`; a quote or backslash would change its meaning.
  if (typeof column.key !== 'string' || column.key === '' || /["\\]/.test(column.key)) {
    throw new FilterError(`Filter on ${column.name} invalid: unsupported column key`);
  }
  state.keys.add(column.key);
  const ctx: ItemContext = { item, column, predicate, term: item.filter_term, state };
  return FAMILY_PARSERS[family](ctx);
}

interface ItemContext {
  item: Item;
  column: FilterColumn;
  predicate: string;
  term: unknown;
  state: State;
}

const not = (c: ParsedCondition | null): ParsedCondition | null => (c ? { op: 'not', item: c } : null);
const cell = (column: FilterColumn): CellSource => ({ kind: 'cell', key: column.key });

function emptiness(predicate: string, src: ParsedCondition & { op: 'empty' }): ParsedCondition | null {
  if (predicate === 'is_empty') return src;
  if (predicate === 'is_not_empty') return not(src);
  return null;
}

function currentUser(ctx: ItemContext, rule: ParsedCondition & { op: 'currentUser' }): ParsedCondition {
  ctx.state.usesCurrentUser = true;
  return rule;
}

const FAMILY_PARSERS: Record<Family, (ctx: ItemContext) => ParsedCondition | null> = {
  text(ctx) {
    const { predicate, column, term } = ctx;
    const src = cell(column);
    if (predicate === 'is_empty' || predicate === 'is_not_empty') return emptiness(predicate, { op: 'empty', src });
    if (predicate === 'is_current_user_ID') return currentUser(ctx, { op: 'currentUser', test: 'text', key: column.key });
    if (isBlank(term)) return null;
    const value = textTerm(term, column.name);
    if (predicate === 'contains') return { op: 'textContains', key: column.key, folded: asciiLower(value) };
    if (predicate === 'does_not_contain') return not({ op: 'textContains', key: column.key, folded: asciiLower(value) });
    if (predicate === 'is') return { op: 'oneOf', src, values: [value] };
    return not({ op: 'oneOf', src, values: [value] }); // is_not
  },

  number({ predicate, column, term }) {
    if (predicate === 'is_empty' || predicate === 'is_not_empty') return emptiness(predicate, { op: 'empty', src: cell(column) });
    if (isBlank(term)) return null;
    const value = numberTerm(term, column.name, column.type === 'duration');
    const key = column.key;
    switch (predicate) {
      case 'equal':
        return { op: 'numCompare', key, cmp: '=', value };
      case 'not_equal':
        return not({ op: 'numCompare', key, cmp: '=', value });
      case 'greater':
        return { op: 'numCompare', key, cmp: '>', value };
      case 'greater_or_equal':
        return { op: 'numCompare', key, cmp: '>=', value };
      case 'less':
        return { op: 'numCompare', key, cmp: '<', value };
      default:
        return { op: 'numCompare', key, cmp: '<=', value }; // less_or_equal
    }
  },

  checkbox({ column, term }) {
    const checked = checkboxTerm(term, column.name);
    const isTrue: ParsedCondition = { op: 'isTrue', key: column.key };
    return checked ? isTrue : not(isTrue);
  },

  date(ctx) {
    const { predicate, column, item } = ctx;
    const src: CellSource | TimeSource = column.type === 'ctime' || column.type === 'mtime' ? { kind: 'time', field: column.type } : cell(column);
    if (predicate === 'is_empty' || predicate === 'is_not_empty') {
      const empty: ParsedCondition = src.kind === 'cell' ? { op: 'not', item: { op: 'dateValid', key: src.key } } : { op: 'empty', src };
      return predicate === 'is_empty' ? empty : not(empty);
    }
    const modifier = modifierAlias(item.filter_term_modifier);
    if (isBlank(modifier)) return null; // the contract: a date filter without a modifier is ignored
    const allowed = predicate === 'is_within' ? WITHIN_MODIFIERS : DAY_MODIFIERS;
    if (typeof modifier !== 'string' || !allowed.includes(modifier)) {
      throw new FilterError(`Filter on ${column.name} invalid: filter_term_modifier '${String(modifier)}' is not supported by '${predicate}'`);
    }
    let term: number | string | null = null;
    if (DAY_COUNT_MODIFIERS.includes(modifier) || modifier === 'exact_date' || modifier === 'exact_date_time') {
      if (isBlank(ctx.term)) return null;
      if (modifier === 'exact_date') term = exactDateTerm(ctx.term, column.name);
      else if (modifier === 'exact_date_time') term = exactDateTimeTerm(ctx.term, column.name);
      else term = dayCountTerm(ctx.term, column.name);
    }
    return { op: 'dateRule', src, predicate: predicate as DatePredicate, modifier, term };
  },

  'single-select'({ predicate, column, term }) {
    const src = cell(column);
    if (predicate === 'is_empty' || predicate === 'is_not_empty') return emptiness(predicate, { op: 'empty', src });
    if (isBlank(term)) return null;
    let values: string[];
    if (predicate === 'is' || predicate === 'is_not') {
      if (typeof term !== 'string') throw new FilterError(`Filter on ${column.name} invalid: filter_term must be an option id or name`);
      values = optionNames([term], column.data);
    } else {
      values = optionNames(stringList(term, column.name), column.data);
      if (values.length === 0) return null;
    }
    const oneOf: ParsedCondition = { op: 'oneOf', src, values };
    return predicate === 'is' || predicate === 'is_any_of' ? oneOf : not(oneOf);
  },

  'multiple-select'({ predicate, column, term }) {
    if (predicate === 'is_empty' || predicate === 'is_not_empty') return emptiness(predicate, { op: 'empty', src: cell(column) });
    const values = optionNames(stringList(term, column.name), column.data);
    return arrayPredicate(predicate, column.key, values);
  },

  collaborator(ctx) {
    const { predicate, column, term } = ctx;
    if (predicate === 'is_empty' || predicate === 'is_not_empty') return emptiness(predicate, { op: 'empty', src: cell(column) });
    if (predicate === 'include_me') return currentUser(ctx, { op: 'currentUser', test: 'array', key: column.key });
    return arrayPredicate(predicate, column.key, stringList(term, column.name));
  },

  creator(ctx) {
    const { predicate, column, term } = ctx;
    const field = column.type === 'creator' ? 'creator' : 'last_modifier';
    if (predicate === 'include_me') return currentUser(ctx, { op: 'currentUser', test: 'user', field });
    const src: UserSource = { kind: 'user', field };
    const values = stringList(term, column.name);
    if (values.length === 0) return null;
    // is / is_not compare with the first user only, as the original.
    const oneOf: ParsedCondition = { op: 'oneOf', src, values: predicate === 'is' || predicate === 'is_not' ? values.slice(0, 1) : values };
    return predicate === 'contains' || predicate === 'is' ? oneOf : not(oneOf);
  },

  file({ predicate, column }) {
    return emptiness(predicate, { op: 'empty', src: cell(column) });
  },
};

function arrayPredicate(predicate: string, key: string, values: string[]): ParsedCondition | null {
  if (values.length === 0) return null;
  switch (predicate) {
    case 'has_any_of':
      return { op: 'hasAny', key, values };
    case 'has_none_of':
      return not({ op: 'hasAny', key, values });
    case 'has_all_of':
      return { op: 'hasAll', key, values };
    default:
      return { op: 'hasExactly', key, values }; // is_exactly
  }
}

/** Keys of every column the filter names, including items that were ignored as incomplete. */
export function usedColumnKeys(filter: CompiledFilter): string[] {
  return [...filter.columnKeys];
}

/** True when the filter depends on the current user (`include_me`, `is_current_user_ID`). */
export function usesCurrentUser(filter: CompiledFilter): boolean {
  return filter.usesCurrentUser;
}

/** The typed clients send `the_past_number_of_days` / `the_next_number_of_days`; both spellings mean the same. */
const MODIFIER_ALIASES: Record<string, string> = {
  the_past_number_of_days: 'the_past_numbers_of_days',
  the_next_number_of_days: 'the_next_numbers_of_days',
};

function modifierAlias(modifier: unknown): unknown {
  return typeof modifier === 'string' ? (MODIFIER_ALIASES[modifier] ?? modifier) : modifier;
}
