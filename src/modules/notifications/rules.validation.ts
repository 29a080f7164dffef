import { badRequest } from '../../shared/errors.js';
import { parseFilters, type FilterColumn } from '../filters/index.js';
import { USER_COLUMN_TYPES, columnByKey, isDateColumn, columnByName, tableById, viewById, type MetaDoc, type MetaTable } from './metadata-doc.js';
import {
  DEFAULT_NOTIFY_HOUR,
  RUN_CONDITION_OF,
  type Members,
  type RuleAction,
  type RuleTrigger,
  type RunCondition,
  type TriggerCondition,
} from './rules.model.js';

/**
 * Validation of a rule body. The original stores nearly anything; we refuse what could never fire
 * and name the offending field in the 400 `error_msg`. Pure: the caller passes the base's metadata
 * and members. Unknown keys of `trigger` and `action` are kept as sent.
 */

export interface RuleShape {
  runCondition: RunCondition;
  trigger: Record<string, unknown>;
  action: Record<string, unknown>;
}

export interface ValidRule {
  runCondition: RunCondition;
  trigger: RuleTrigger;
  action: RuleAction;
}

const RUN_CONDITIONS: readonly string[] = ['per_update', 'per_day'];
const MAX_NAME = 255;
const MAX_MSG = 10_000;
const MAX_ALARM_DAYS = 3650;
const MAX_LIST = 1000;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON bodies carry objects; form bodies may carry them as JSON text. */
export function objectOf(value: unknown): Obj | null {
  if (isObject(value)) return value;
  if (typeof value === 'string' && value.trim().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(value);
      return isObject(parsed) ? parsed : null;
    } catch {
      return null;
    }
  }
  return null;
}

/** The checks the original makes before it looks the base up: run_condition, trigger, action. */
export function checkRuleShape(body: unknown): RuleShape {
  const b = isObject(body) ? body : {};
  const run = b.run_condition;
  if (typeof run !== 'string' || !RUN_CONDITIONS.includes(run)) {
    const shown = typeof run === 'string' || typeof run === 'number' ? ` ${String(run)}` : '';
    throw badRequest(`run_condition${shown} invalid.`);
  }
  const trigger = objectOf(b.trigger);
  if (!trigger || Object.keys(trigger).length === 0) throw badRequest('trigger invalid.');
  const action = objectOf(b.action);
  if (!action || Object.keys(action).length === 0) throw badRequest('action invalid.');
  return { runCondition: run as RunCondition, trigger, action };
}

export const fail = (field: string, why: string): never => {
  throw badRequest(`${field} invalid: ${why}.`);
};

export function filterColumns(table: MetaTable): FilterColumn[] {
  return table.columns.map((c) => ({ key: c.key, name: c.name, type: c.type, data: c.data }));
}

/** Full validation against the base. Throws a 400 naming the first bad field. */
export function validateRule(shape: RuleShape, doc: MetaDoc, members: Members): ValidRule {
  const t = shape.trigger;
  const condition = t.condition;
  if (typeof condition !== 'string' || !Object.hasOwn(RUN_CONDITION_OF, condition)) {
    fail('trigger.condition', 'must be rows_modified, filters_satisfy, rows_added or near_deadline');
  }
  const cond = condition as TriggerCondition;
  if (RUN_CONDITION_OF[cond] !== shape.runCondition) {
    fail('trigger.condition', `${cond} needs run_condition ${RUN_CONDITION_OF[cond]}, not ${shape.runCondition}`);
  }
  const { ruleName, table } = triggerTarget(t, doc);
  const trigger: RuleTrigger = { ...t, rule_name: ruleName, table_id: table._id, view_id: t.view_id as string, condition: cond };
  if (cond === 'near_deadline') Object.assign(trigger, deadlineFields(t, table));
  else Object.assign(trigger, updateFields(t, table, cond));

  return { runCondition: shape.runCondition, trigger, action: validateAction(shape.action, table, members) };
}

/** `rule_name`, `table_id` and `view_id` of a trigger (notification and automation rules alike). */
export function triggerTarget(t: Obj, doc: MetaDoc): { ruleName: string; table: MetaTable } {
  const ruleName = typeof t.rule_name === 'string' ? t.rule_name.trim() : '';
  if (ruleName === '' || ruleName.length > MAX_NAME) fail('trigger.rule_name', `must be text of 1 to ${MAX_NAME} characters`);
  if (typeof t.table_id !== 'string' || t.table_id === '') fail('trigger.table_id', 'must be a table id');
  const table = tableById(doc, t.table_id as string) ?? fail('trigger.table_id', `table ${String(t.table_id)} not found`);
  if (typeof t.view_id !== 'string' || t.view_id === '') fail('trigger.view_id', 'must be a view id');
  if (!viewById(table, t.view_id as string)) fail('trigger.view_id', `view ${String(t.view_id)} not found in table ${table.name}`);
  return { ruleName, table };
}

/** The near_deadline part of a trigger (notification rules and automations). */
export function deadlineFields(t: Obj, table: MetaTable): Partial<RuleTrigger> {
  const requested = typeof t.date_column_name === 'string' ? t.date_column_name.trim() : '';
  if (t.date_column_name !== undefined && t.date_column_name !== null && typeof t.date_column_name !== 'string') {
    fail('trigger.date_column_name', 'must be a column name');
  }
  let dateColumnName: string;
  if (requested === '') {
    // Blank means the table's first date column (the specification).
    const first = table.columns.find(isDateColumn) ?? fail('trigger.date_column_name', `table ${table.name} has no date column`);
    dateColumnName = first.name;
  } else {
    const column = columnByName(table, requested) ?? fail('trigger.date_column_name', `column ${requested} not found`);
    if (!isDateColumn(column)) fail('trigger.date_column_name', `column ${requested} is not a date column`);
    dateColumnName = column.name;
  }
  const alarmDays = integerField(t.alarm_days, 0);
  if (alarmDays === null || alarmDays < 0 || alarmDays > MAX_ALARM_DAYS) {
    fail('trigger.alarm_days', `must be a whole number of days from 0 to ${MAX_ALARM_DAYS}`);
  }
  const notifyHour = integerField(t.notify_hour, DEFAULT_NOTIFY_HOUR);
  if (notifyHour === null || notifyHour < 0 || notifyHour > 23) fail('trigger.notify_hour', 'must be a whole number from 0 to 23');
  return { date_column_name: dateColumnName, alarm_days: alarmDays!, notify_hour: notifyHour! };
}

/**
 * The per_update part of a trigger: watched columns and filters. `filtersOptional`: automations accept
 * filters_satisfy without filters (the original's "watch all" example), notification rules do not.
 */
export function updateFields(t: Obj, table: MetaTable, cond: TriggerCondition, filtersOptional = false): Partial<RuleTrigger> {
  const out: Partial<RuleTrigger> = {};
  if (t.watch_all_columns !== undefined && t.watch_all_columns !== null) {
    if (typeof t.watch_all_columns !== 'boolean') fail('trigger.watch_all_columns', 'must be true or false');
    out.watch_all_columns = t.watch_all_columns as boolean;
  }
  if (t.column_keys !== undefined && t.column_keys !== null) {
    if (!Array.isArray(t.column_keys) || t.column_keys.length > MAX_LIST || !t.column_keys.every((k) => typeof k === 'string')) {
      fail('trigger.column_keys', 'must be a list of column keys');
    }
    const keys = [...new Set(t.column_keys as string[])];
    for (const key of keys) if (!columnByKey(table, key)) fail('trigger.column_keys', `column ${key} not found in table ${table.name}`);
    out.column_keys = keys;
  }
  if (out.watch_all_columns === false && (out.column_keys ?? []).length === 0 && cond !== 'rows_added') {
    fail('trigger.column_keys', 'name at least one column when watch_all_columns is false');
  }
  if (cond === 'filters_satisfy' || cond === 'rows_added') {
    const filters = t.filters ?? [];
    if (!Array.isArray(filters)) fail('trigger.filters', 'must be a list of filters');
    if (cond === 'filters_satisfy' && !filtersOptional && (filters as unknown[]).length === 0) fail('trigger.filters', 'filters_satisfy needs at least one filter');
    const conjunction = conjunctionOf(t.filter_conjunction);
    const parsed = parseFilters({ filters, filter_conjunction: conjunction }, filterColumns(table));
    if (!parsed.ok) fail('trigger.filters', parsed.error);
    out.filters = filters as unknown[];
    out.filter_conjunction = conjunction;
  }
  return out;
}

export function conjunctionOf(value: unknown): 'And' | 'Or' {
  if (value === undefined || value === null || value === '') return 'And';
  if (typeof value === 'string' && /^(and|or)$/i.test(value)) return value.toLowerCase() === 'and' ? 'And' : 'Or';
  return fail('trigger.filter_conjunction', 'must be And or Or');
}

function validateAction(a: Obj, table: MetaTable, members: Members): RuleAction {
  if (a.type !== undefined && a.type !== null && a.type !== 'notify') fail('action.type', 'the only action type is notify');
  const rawUsers = a.users ?? [];
  if (!Array.isArray(rawUsers) || rawUsers.length > MAX_LIST || !rawUsers.every((u) => typeof u === 'string')) {
    fail('action.users', 'must be a list of user ids');
  }
  const users = [...new Set((rawUsers as string[]).map((u) => u.trim()).filter((u) => u !== ''))];
  for (const user of users) if (!members.has(user)) fail('action.users', `user ${user} has no access to this base`);

  let usersColumnKey: string | undefined;
  if (a.users_column_key !== undefined && a.users_column_key !== null && a.users_column_key !== '') {
    if (typeof a.users_column_key !== 'string') fail('action.users_column_key', 'must be a column key');
    const column = columnByKey(table, a.users_column_key as string) ?? fail('action.users_column_key', `column ${String(a.users_column_key)} not found`);
    if (!USER_COLUMN_TYPES.includes(column.type)) fail('action.users_column_key', `column ${column.name} is not a collaborator column`);
    usersColumnKey = column.key;
  }
  if (users.length === 0 && usersColumnKey === undefined) fail('action.users', 'name at least one user or a users_column_key');

  const msg = a.default_msg ?? '';
  if (typeof msg !== 'string' || msg.length > MAX_MSG) fail('action.default_msg', `must be text of at most ${MAX_MSG} characters`);

  const action: RuleAction = { ...a, type: 'notify', users, default_msg: msg as string };
  if (usersColumnKey !== undefined) action.users_column_key = usersColumnKey;
  else delete action.users_column_key;
  return action;
}

/** An integer given as a number or digit string; `fallback` when absent; null when malformed. */
export function integerField(value: unknown, fallback: number): number | null {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'number') return Number.isInteger(value) ? value : null;
  if (typeof value === 'string' && /^\s*-?\d{1,6}\s*$/.test(value)) return Number(value);
  return null;
}
