import type { ChangeEvent, OpType } from '../events/index.js';
import { matchesRow, type FilterContext, type StoredRow } from '../filters/index.js';
import { seesRow } from '../access/index.js';
import type { PreparedRule } from './rule-check.js';
import type { Members, RuleNotificationDetail, TriggerCondition } from './rules.model.js';
import { renderMessage } from './templating.js';

/**
 * The rule engine: given a prepared rule and one committed change, decide whether the rule fires and
 * for whom. Pure (no I/O, no clock): de-duplication and storage are the caller's.
 */

export interface EngineContext {
  members: Members;
  timeZone: string;
  userName(virtualId: string): string;
}

export type SkipReason =
  | 'invalid'
  | 'not_per_update'
  | 'other_table'
  | 'op_type'
  | 'row_deleted'
  | 'not_in_view'
  | 'column_not_watched'
  | 'filters_not_met'
  | 'no_recipients';

export type Decision =
  | { fire: false; reason: SkipReason }
  | { fire: true; rowId: string; recipients: number[]; detail: RuleNotificationDetail };

/** Which changes each condition reacts to (event-semantics §B.1, with links as modifications). */
const ACCEPTED: Record<Exclude<TriggerCondition, 'near_deadline'>, readonly OpType[]> = {
  rows_modified: ['modify_row', 'add_link', 'remove_link'],
  filters_satisfy: ['modify_row', 'add_link'],
  rows_added: ['insert_row'],
};

export function evaluate(p: PreparedRule, event: ChangeEvent, ctx: EngineContext): Decision {
  const matched = triggerMatch(p, event, ctx.timeZone);
  if (!matched.fire) return matched;
  const row = matched.row;
  const recipients = recipientsFor(p, row, ctx.members, { now: event.opTime, timeZone: ctx.timeZone });
  if (recipients.length === 0) return skip('no_recipients');
  return { fire: true, rowId: row._id, recipients, detail: detailFor(p, row, ctx) };
}

/**
 * The trigger half of the engine, shared with automation rules: does this change fire the rule's
 * per_update trigger (table, change kind, view, watched columns, filters)? Pure.
 */
export function triggerMatch(p: PreparedRule, event: ChangeEvent, timeZone: string): { fire: false; reason: SkipReason } | { fire: true; row: StoredRow } {
  const { rule } = p;
  const t = rule.trigger;
  if (!rule.isValid) return skip('invalid');
  if (rule.runCondition !== 'per_update' || t.condition === 'near_deadline') return skip('not_per_update');
  if (event.baseId !== rule.baseId || event.tableId !== t.table_id) return skip('other_table');
  if (!ACCEPTED[t.condition].includes(event.opType)) return skip('op_type');
  if (!event.row) return skip('row_deleted');

  const row = storedRowOf(event);
  const filterCtx: FilterContext = { now: event.opTime, timeZone, currentUser: event.opUser };
  if (!inView(p, row, filterCtx)) return skip('not_in_view');

  if (t.condition !== 'rows_added') {
    const changed = event.rowData.map((c) => c.column_key);
    if (changed.length === 0) return skip('column_not_watched');
    if (t.watch_all_columns === false) {
      const watched = new Set(t.column_keys ?? []);
      if (!changed.some((key) => watched.has(key))) return skip('column_not_watched');
    }
  }
  if (t.condition !== 'rows_modified' && p.ruleFilter && !matchesRow(p.ruleFilter, row, filterCtx)) return skip('filters_not_met');
  return { fire: true, row };
}

/** The row is in the rule's view: the view's filters (if any) match it. */
export function inView(p: PreparedRule, row: StoredRow, ctx: FilterContext): boolean {
  if (p.viewFilterBroken) return false;
  return p.viewFilter === null || matchesRow(p.viewFilter, row, ctx);
}

/**
 * `action.users` ∪ the users named by the `users_column_key` cell, limited to the base's members who
 * can see the row (a user with view shares only: one of their views shows it, `access`'s `seesRow`,
 * judged at `when`), de-duplicated, as user ids in first-seen order.
 */
export function recipientsFor(p: Pick<PreparedRule, 'rule' | 'table'>, row: StoredRow, members: Members, when: { now: number; timeZone: string }): number[] {
  const ids = [...p.rule.action.users];
  const key = p.rule.action.users_column_key;
  if (key) {
    const column = p.table.columns.find((c) => c.key === key);
    if (column?.type === 'creator') ids.push(row._creator);
    else if (column?.type === 'last-modifier') ids.push(row._last_modifier);
    else if (column) {
      const cell = row.data[key];
      if (Array.isArray(cell)) ids.push(...cell.filter((v): v is string => typeof v === 'string'));
      else if (typeof cell === 'string') ids.push(cell);
    }
  }
  const out: number[] = [];
  const seen = new Set<number>();
  for (const id of ids) {
    const member = members.get(id);
    if (member && !seen.has(member.userId) && seesRow(member.views, p.table, row, { now: when.now, timeZone: when.timeZone, currentUser: id })) {
      seen.add(member.userId);
      out.push(member.userId);
    }
  }
  return out;
}

export function detailFor(p: PreparedRule, row: StoredRow, ctx: Pick<EngineContext, 'timeZone' | 'userName'>): RuleNotificationDetail {
  const t = p.rule.trigger;
  return {
    table_id: t.table_id,
    view_id: t.view_id,
    condition: t.condition,
    rule_id: p.rule.id,
    rule_name: t.rule_name,
    msg: renderMessage(p.rule.action.default_msg, p.table, row, ctx),
    row_id_list: [row._id],
  };
}

/** The event's row after the change as the filter engine's StoredRow (cells are the non-`_` keys). */
export function storedRowOf(event: ChangeEvent): StoredRow {
  const row = event.row ?? {};
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) if (!key.startsWith('_')) data[key] = value;
  return {
    _id: typeof row._id === 'string' ? row._id : event.rowId,
    _ctime: toMs(row._ctime, event.opTime),
    _mtime: toMs(row._mtime, event.opTime),
    _creator: typeof row._creator === 'string' ? row._creator : event.opUser,
    _last_modifier: typeof row._last_modifier === 'string' ? row._last_modifier : event.opUser,
    data,
  };
}

function toMs(value: unknown, fallback: number): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string') {
    const parsed = Date.parse(value);
    if (Number.isFinite(parsed)) return parsed;
  }
  return fallback;
}

const skip = (reason: SkipReason) => ({ fire: false as const, reason });
