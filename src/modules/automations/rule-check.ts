import { parseFilters, type CompiledFilter } from '../filters/index.js';
import {
  columnByKey,
  columnByName,
  filterColumns,
  prepareRule,
  tableById,
  type Members,
  type MetaDoc,
  type MetaTable,
  type PreparedRule,
  type Rule,
  type RuleTrigger,
} from '../notifications/index.js';
import { linkRecordsProblem } from './link-records.js';
import type { AutomationRule } from './model.js';

export interface PreparedAutomation {
  rule: AutomationRule;
  /** The notification engine's view of the trigger (table, view, filters compiled once). */
  engine: PreparedRule;
  table: MetaTable;
  /** run_periodically_by_condition: its filters (null when none). */
  periodicFilter: CompiledFilter | null;
}

export type AutomationCheck = { ok: true; prepared: PreparedAutomation } | { ok: false; reason: string };

/**
 * Whether a stored automation still fits its base. The trigger is checked by the notification rules'
 * `prepareRule` (one engine: a notification rule is an automation with one notify action); the actions'
 * columns, tables and users here. Pure.
 */
export function checkAutomation(rule: AutomationRule, doc: MetaDoc, members: Members): AutomationCheck {
  const users = rule.actions.flatMap((a) => (a.type === 'notify' && Array.isArray(a.users) ? (a.users as string[]) : []));
  const asNotification: Rule = {
    id: rule.id,
    baseId: rule.baseId,
    dtableUuid: rule.dtableUuid,
    runCondition: 'per_update',
    trigger: rule.trigger as unknown as RuleTrigger,
    action: { type: 'notify', users, default_msg: '' },
    creatorId: rule.creatorId,
    ctime: 0,
    lastTriggerTime: null,
    isValid: rule.isValid,
    invalidReason: null,
    nextRunAt: rule.nextRunAt,
  };
  const check = prepareRule(asNotification, doc, members);
  if (!check.ok) return check;
  const table = check.prepared.table;

  let periodicFilter: CompiledFilter | null = null;
  if (rule.trigger.condition === 'run_periodically_by_condition' && (rule.trigger.filters ?? []).length > 0) {
    const parsed = parseFilters({ filters: rule.trigger.filters ?? [], filter_conjunction: rule.trigger.filter_conjunction }, filterColumns(table));
    if (!parsed.ok) return { ok: false, reason: `its filters no longer fit table ${table.name}: ${parsed.error}` };
    periodicFilter = parsed.filter;
  }

  for (const action of rule.actions) {
    const reason = actionProblem(action, doc, table);
    if (reason) return { ok: false, reason };
  }
  return { ok: true, prepared: { rule, engine: check.prepared, table, periodicFilter } };
}

function missingColumns(cells: unknown, table: MetaTable): string | null {
  if (!cells || typeof cells !== 'object') return null;
  for (const key of Object.keys(cells)) if (!columnByKey(table, key) && !columnByName(table, key)) return key;
  return null;
}

function actionProblem(action: AutomationRule['actions'][number], doc: MetaDoc, table: MetaTable): string | null {
  if (action.type === 'notify' && typeof action.users_column_key === 'string' && action.users_column_key !== '') {
    if (!columnByKey(table, action.users_column_key)) return `the users column ${action.users_column_key} of action ${action._id} was deleted`;
  }
  if (action.type === 'update_record') {
    const missing = missingColumns(action.updates, table);
    if (missing) return `the column ${missing} of action ${action._id} was deleted`;
  }
  if (action.type === 'link_records') return linkRecordsProblem(action, doc, table);
  if (action.type === 'add_record') {
    const target = tableById(doc, String(action.table_id ?? table._id));
    if (!target) return `the table ${String(action.table_id)} of action ${action._id} was deleted`;
    const missing = missingColumns(action.row, target);
    if (missing) return `the column ${missing} of action ${action._id} was deleted`;
  }
  return null;
}
