import { badRequest } from '../../shared/errors.js';
import { parseFilters } from '../filters/index.js';
import {
  USER_COLUMN_TYPES,
  columnByKey,
  columnByName,
  conjunctionOf,
  deadlineFields,
  filterColumns,
  integerField,
  invalidField,
  objectOf,
  tableById,
  triggerTarget,
  updateFields,
  type Members,
  type MetaDoc,
  type MetaTable,
} from '../notifications/index.js';
import { linkRecordsFields } from './link-records.js';
import {
  ACTION_TYPES,
  NEEDS_ROW,
  PERIODIC,
  RUN_CONDITIONS,
  type ActionType,
  type AutomationAction,
  type AutomationCondition,
  type AutomationRunCondition,
  type AutomationTrigger,
} from './model.js';

/**
 * Validation of an automation rule body. Triggers are checked by the notification rules' own
 * validators (one engine); actions here. A 400 names the first bad field.
 */

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const LIMITS = { actions: 10, text: 10_000, name: 255, addresses: 2000, users: 1000, cells: 200, url: 2000, body: 64 * 1024 };

export interface AutomationShape {
  runCondition: AutomationRunCondition;
  trigger: Obj;
  actions: Obj[];
}

export interface ValidAutomation {
  runCondition: AutomationRunCondition;
  trigger: AutomationTrigger;
  actions: AutomationAction[];
}

/** The checks made before the base is looked up. */
export function checkAutomationShape(body: unknown): AutomationShape {
  const b = isObject(body) ? body : {};
  const run = b.run_condition;
  if (typeof run !== 'string' || !(RUN_CONDITIONS as readonly string[]).includes(run)) {
    throw badRequest(`run_condition invalid: must be one of ${RUN_CONDITIONS.join(', ')}.`);
  }
  const trigger = objectOf(b.trigger);
  if (!trigger || Object.keys(trigger).length === 0) throw badRequest('trigger invalid.');
  let actions: unknown = b.actions;
  if (typeof actions === 'string') {
    try {
      actions = JSON.parse(actions);
    } catch {
      throw badRequest('actions invalid: not JSON.');
    }
  }
  if (!Array.isArray(actions) || actions.length === 0) throw badRequest('actions invalid: give a list of at least one action.');
  if (actions.length > LIMITS.actions) throw badRequest(`actions invalid: at most ${LIMITS.actions} actions.`);
  if (!actions.every(isObject)) throw badRequest('actions invalid: every action is an object.');
  return { runCondition: run as AutomationRunCondition, trigger, actions: actions as Obj[] };
}

export function validateAutomation(shape: AutomationShape, doc: MetaDoc, members: Members): ValidAutomation {
  const t = shape.trigger;
  const cond = t.condition;
  const periodic = shape.runCondition !== 'per_update';
  const allowed = !periodic
    ? ['filters_satisfy', 'rows_added']
    : shape.runCondition === 'per_day'
      ? ['run_periodically', 'run_periodically_by_condition', 'near_deadline']
      : ['run_periodically', 'run_periodically_by_condition'];
  if (typeof cond !== 'string' || !allowed.includes(cond)) {
    invalidField('trigger.condition', `with run_condition ${shape.runCondition} it must be ${allowed.join(', ')}`);
  }
  const { ruleName, table } = triggerTarget(t, doc);
  const trigger: AutomationTrigger = { ...t, rule_name: ruleName, table_id: table._id, view_id: t.view_id as string, condition: cond as AutomationCondition };
  if (cond === 'near_deadline') Object.assign(trigger, deadlineFields(t, table));
  else if (periodic) Object.assign(trigger, scheduleFields(t, shape.runCondition), periodicFilters(t, table, cond as string));
  else Object.assign(trigger, updateFields(t, table, cond as 'filters_satisfy' | 'rows_added', true));

  const hasRow = cond !== 'run_periodically';
  const seen = new Set<string>();
  const actions = shape.actions.map((a, i) => {
    const action = validateAction(a, i, doc, table, members, hasRow);
    if (seen.has(action._id)) invalidField(`actions.${i}._id`, `${action._id} is used twice`);
    seen.add(action._id);
    return action;
  });
  return { runCondition: shape.runCondition, trigger, actions };
}

function hourField(t: Obj, field: string): number {
  const hour = integerField(t[field], 12);
  if (hour === null || hour < 0 || hour > 23) invalidField(`trigger.${field}`, 'must be a whole number from 0 to 23');
  return hour!;
}

function scheduleFields(t: Obj, run: AutomationRunCondition): Partial<AutomationTrigger> {
  if (run === 'per_day') return { notify_hour: hourField(t, 'notify_hour') };
  if (run === 'per_week') {
    const day = integerField(t.notify_week_day, 1);
    if (day === null || day < 1 || day > 7) invalidField('trigger.notify_week_day', 'must be a whole number from 1 (Monday) to 7 (Sunday)');
    return { notify_week_day: day!, notify_week_hour: hourField(t, 'notify_week_hour') };
  }
  const day = integerField(t.notify_month_day, 1);
  if (day === null || day < 1 || day > 31) invalidField('trigger.notify_month_day', 'must be a whole number from 1 to 31');
  return { notify_month_day: day!, notify_month_hour: hourField(t, 'notify_month_hour') };
}

function periodicFilters(t: Obj, table: MetaTable, cond: string): Partial<AutomationTrigger> {
  if (cond !== 'run_periodically_by_condition') return {};
  const filters = t.filters ?? [];
  if (!Array.isArray(filters)) invalidField('trigger.filters', 'must be a list of filters');
  const conjunction = conjunctionOf(t.filter_conjunction);
  const parsed = parseFilters({ filters, filter_conjunction: conjunction }, filterColumns(table));
  if (!parsed.ok) invalidField('trigger.filters', parsed.error);
  return { filters: filters as unknown[], filter_conjunction: conjunction };
}

function text(a: Obj, field: string, where: string, max: number, required = false): string {
  const value = a[field] ?? '';
  if (typeof value !== 'string' || value.length > max) invalidField(`${where}.${field}`, `must be text of at most ${max} characters`);
  if (required && (value as string).trim() === '') invalidField(`${where}.${field}`, 'must not be empty');
  return value as string;
}

/** `{key or name: value}` cells for `table`; keys are kept as sent (the rows writer takes either). */
function cells(value: unknown, field: string, table: MetaTable): Obj {
  if (!isObject(value)) return invalidField(field, 'must be an object of column keys (or names) and values');
  const entries = Object.entries(value);
  if (entries.length > LIMITS.cells) invalidField(field, `at most ${LIMITS.cells} cells`);
  for (const [key] of entries) {
    if (!columnByKey(table, key) && !columnByName(table, key)) invalidField(field, `column ${key} not found in table ${table.name}`);
  }
  if (JSON.stringify(value).length > LIMITS.body) invalidField(field, 'too large');
  return value;
}

const EMAIL = /^[^\s@,;]+@[^\s@,;]+\.[^\s@,;]+$/;

function addresses(a: Obj, field: string, where: string, required: boolean): string {
  const value = text(a, field, where, LIMITS.addresses, required);
  for (const part of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    if (!part.includes('{') && !EMAIL.test(part)) invalidField(`${where}.${field}`, `${part} is not an e-mail address or a {Column} placeholder`);
  }
  return value;
}

function validateAction(a: Obj, i: number, doc: MetaDoc, table: MetaTable, members: Members, hasRow: boolean): AutomationAction {
  const where = `actions.${i}`;
  const type = a.type;
  if (typeof type !== 'string' || !(ACTION_TYPES as readonly string[]).includes(type)) {
    invalidField(`${where}.type`, `must be one of ${ACTION_TYPES.join(', ')}`);
  }
  if (NEEDS_ROW.has(type as string) && !hasRow) invalidField(`${where}.type`, `${String(type)} needs a triggering row; run_periodically has none`);
  let id = a._id;
  if (typeof id === 'number' && Number.isInteger(id)) id = String(id);
  if (id === undefined || id === null || id === '') id = String(100000 + i);
  if (typeof id !== 'string' || id.length > 64) invalidField(`${where}._id`, 'must be text of at most 64 characters');
  const base = { ...a, _id: id as string, type: type as ActionType };
  switch (type as ActionType) {
    case 'notify':
      return { ...base, ...notifyFields(a, where, table, members) };
    case 'send_email':
      return {
        ...base,
        send_to: addresses(a, 'send_to', where, true),
        copy_to: addresses(a, 'copy_to', where, false),
        subject: text(a, 'subject', where, LIMITS.name),
        default_msg: text(a, 'default_msg', where, LIMITS.text),
      };
    case 'update_record':
      return { ...base, updates: cells(a.updates, `${where}.updates`, table) };
    case 'lock_record':
      if (a.is_locked !== true && a.is_locked !== 'true') invalidField(`${where}.is_locked`, 'must be true');
      return { ...base, is_locked: true };
    case 'add_record': {
      let target = table;
      if (a.table_id !== undefined && a.table_id !== null && a.table_id !== '') {
        if (typeof a.table_id !== 'string') invalidField(`${where}.table_id`, 'must be a table id');
        target = tableById(doc, a.table_id as string) ?? invalidField(`${where}.table_id`, `table ${String(a.table_id)} not found`);
      }
      return { ...base, table_id: target._id, row: cells(a.row ?? {}, `${where}.row`, target) };
    }
    case 'link_records':
      return { ...base, ...linkRecordsFields(a, where, doc, table) };
    case 'call_webhook':
      return { ...base, ...webhookFields(a, where) };
    case 'run_script':
      return { ...base, script: text(a, 'script', where, LIMITS.body, true) };
  }
}

function notifyFields(a: Obj, where: string, table: MetaTable, members: Members): Obj {
  const raw = a.users ?? [];
  if (!Array.isArray(raw) || raw.length > LIMITS.users || !raw.every((u) => typeof u === 'string')) {
    invalidField(`${where}.users`, 'must be a list of user ids');
  }
  const users = [...new Set((raw as string[]).map((u) => u.trim()).filter((u) => u !== ''))];
  for (const user of users) if (!members.has(user)) invalidField(`${where}.users`, `user ${user} has no access to this base`);
  let usersColumnKey = '';
  if (a.users_column_key !== undefined && a.users_column_key !== null && a.users_column_key !== '') {
    if (typeof a.users_column_key !== 'string') invalidField(`${where}.users_column_key`, 'must be a column key');
    const column = columnByKey(table, a.users_column_key as string) ?? invalidField(`${where}.users_column_key`, `column ${String(a.users_column_key)} not found`);
    if (!USER_COLUMN_TYPES.includes(column.type)) invalidField(`${where}.users_column_key`, `column ${column.name} is not a collaborator column`);
    usersColumnKey = column.key;
  }
  if (users.length === 0 && usersColumnKey === '') invalidField(`${where}.users`, 'name at least one user or a users_column_key');
  return { users, users_column_key: usersColumnKey, default_msg: text(a, 'default_msg', where, LIMITS.text) };
}

function webhookFields(a: Obj, where: string): Obj {
  const url = text(a, 'url', where, LIMITS.url, true);
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) invalidField(`${where}.url`, 'must be an http(s) URL');
  const out: Obj = { url, body: text(a, 'body', where, LIMITS.body) };
  if (a.secret !== undefined && a.secret !== null && a.secret !== '') out.secret = text(a, 'secret', where, 255);
  return out;
}
