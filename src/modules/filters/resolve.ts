/**
 * Binds a parsed filter to a context: date modifiers become concrete key ranges ("today" is the day of
 * `ctx.now` in `ctx.timeZone`, starting 00:00 there) and `include_me` / `is_current_user_ID` become
 * comparisons with `ctx.currentUser`. The result is what both evaluators interpret.
 */
import {
  addDays,
  addMonths,
  instantOfLocal,
  isoWeekday,
  localDayKey,
  monthEnd,
  monthStart,
  nextKey,
  previousKey,
} from './dates.js';
import type { CellSource, Condition, DateRule, DateUnit, FilterContext, ParsedCondition, TimeSource } from './types.js';

export function resolveCondition(condition: ParsedCondition | null, ctx: FilterContext): Condition | null {
  if (!condition) return null;
  const timeZone = ctx.timeZone || 'UTC';
  const walk = (c: ParsedCondition): Condition => {
    switch (c.op) {
      case 'and':
      case 'or':
        return { op: c.op, items: c.items.map(walk) };
      case 'not':
        return { op: 'not', item: walk(c.item) };
      case 'currentUser': {
        const user = ctx.currentUser;
        if (typeof user !== 'string' || user === '') return { op: 'const', value: false };
        if (c.test === 'text') return { op: 'oneOf', src: { kind: 'cell', key: c.key }, values: [user] };
        if (c.test === 'array') return { op: 'hasAny', key: c.key, values: [user] };
        return { op: 'oneOf', src: { kind: 'user', field: c.field }, values: [user] };
      }
      case 'dateRule':
        return resolveDate(c, localDayKey(ctx.now, timeZone), timeZone);
      default:
        return c;
    }
  };
  return walk(condition);
}

type Range = { from: string | null; to: string | null };

/** The day (or minute) a non-`is_within` modifier names. */
function targetKey(rule: DateRule, today: string): string {
  const days = typeof rule.term === 'number' ? rule.term : 0;
  switch (rule.modifier) {
    case 'today':
      return today;
    case 'tomorrow':
      return addDays(today, 1);
    case 'yesterday':
      return addDays(today, -1);
    case 'one_week_ago':
      return addDays(today, -7);
    case 'one_week_from_now':
      return addDays(today, 7);
    case 'one_month_ago':
      return addMonths(today, -1);
    case 'one_month_from_now':
      return addMonths(today, 1);
    case 'number_of_days_ago':
      return addDays(today, -days);
    case 'number_of_days_from_now':
      return addDays(today, days);
    default:
      return String(rule.term); // exact_date, exact_date_time (validated by the parser)
  }
}

/** The inclusive day range an `is_within` modifier names; weeks run Monday to Sunday. */
function withinRange(rule: DateRule, today: string): Range {
  const days = typeof rule.term === 'number' ? rule.term : 0;
  const monday = addDays(today, 1 - isoWeekday(today));
  const year = today.slice(0, 4);
  const yearRange = (offset: number) => {
    const y = String(Number(year) + offset).padStart(4, '0');
    return { from: `${y}-01-01`, to: `${y}-12-31` };
  };
  switch (rule.modifier) {
    case 'the_past_week':
      return { from: addDays(monday, -7), to: addDays(monday, -1) };
    case 'this_week':
      return { from: monday, to: addDays(monday, 6) };
    case 'the_next_week':
      return { from: addDays(monday, 7), to: addDays(monday, 13) };
    case 'the_past_month': {
      const first = monthStart(addMonths(monthStart(today), -1));
      return { from: first, to: monthEnd(first) };
    }
    case 'this_month':
      return { from: monthStart(today), to: monthEnd(today) };
    case 'the_next_month': {
      const first = monthStart(addMonths(monthStart(today), 1));
      return { from: first, to: monthEnd(first) };
    }
    case 'the_past_year':
      return yearRange(-1);
    case 'this_year':
      return yearRange(0);
    case 'the_next_year':
      return yearRange(1);
    case 'the_next_numbers_of_days':
      return { from: today, to: addDays(today, days) };
    default:
      return { from: addDays(today, -days), to: today }; // the_past_numbers_of_days
  }
}

function rangeFor(rule: DateRule, today: string, unit: DateUnit): Range {
  if (rule.predicate === 'is_within') return withinRange(rule, today);
  const target = targetKey(rule, today);
  switch (rule.predicate) {
    case 'is':
    case 'is_not':
      return { from: target, to: target };
    case 'is_after':
      return { from: nextKey(target, unit), to: null };
    case 'is_before':
      return { from: null, to: previousKey(target, unit) };
    case 'is_on_or_before':
      return { from: null, to: target };
    default:
      return { from: target, to: null }; // is_on_or_after
  }
}

function rangeCondition(src: CellSource | TimeSource, range: Range, unit: DateUnit, timeZone: string): Condition {
  if (src.kind === 'cell') return { op: 'dateKeyRange', key: src.key, unit, from: range.from, to: range.to };
  // ctime / mtime are instants: a local day (or minute) range becomes [start of `from`, start of the key after `to`).
  return {
    op: 'timeRange',
    field: src.field,
    from: range.from === null ? null : instantOfLocal(range.from, timeZone),
    until: range.to === null ? null : instantOfLocal(nextKey(range.to, unit), timeZone),
  };
}

function resolveDate(rule: DateRule, today: string, timeZone: string): Condition {
  const unit: DateUnit = rule.modifier === 'exact_date_time' ? 'minute' : 'day';
  const inRange = rangeCondition(rule.src, rangeFor(rule, today, unit), unit, timeZone);
  if (rule.predicate !== 'is_not') return inRange;
  // is_not: a date that is present and different (empty cells do not match, as the original).
  const present: Condition = rule.src.kind === 'cell' ? { op: 'dateValid', key: rule.src.key } : { op: 'not', item: { op: 'empty', src: rule.src } };
  return { op: 'and', items: [present, { op: 'not', item: inRange }] };
}
