import type { Actor, BaseRef, ScopedRowWriter } from '../rows/index.js';
/** The shapes of an automation rule, as stored and as the runner sees it. */

export type AutomationRunCondition = 'per_update' | 'per_day' | 'per_week' | 'per_month';
export type AutomationCondition = 'filters_satisfy' | 'rows_added' | 'run_periodically' | 'run_periodically_by_condition' | 'near_deadline';

export const RUN_CONDITIONS: readonly AutomationRunCondition[] = ['per_update', 'per_day', 'per_week', 'per_month'];
export const PERIODIC: ReadonlySet<string> = new Set(['run_periodically', 'run_periodically_by_condition', 'near_deadline']);

/** Actions that write rows (one transaction with the run record) and those that reach out (retried). */
export const ROW_ACTIONS: ReadonlySet<string> = new Set(['update_record', 'lock_record', 'add_record', 'link_records']);
export const OUTBOUND_ACTIONS: ReadonlySet<string> = new Set(['send_email', 'call_webhook']);
export const ACTION_TYPES = ['notify', 'send_email', 'update_record', 'lock_record', 'add_record', 'link_records', 'call_webhook', 'run_script'] as const;
export type ActionType = (typeof ACTION_TYPES)[number];
/** Actions that act on the triggering row: not allowed where no row triggers the rule. */
export const NEEDS_ROW: ReadonlySet<string> = new Set(['update_record', 'lock_record', 'link_records']);

export interface AutomationTrigger {
  rule_name: string;
  table_id: string;
  view_id: string;
  condition: AutomationCondition;
  watch_all_columns?: boolean;
  column_keys?: string[];
  filters?: unknown[];
  filter_conjunction?: 'And' | 'Or';
  notify_hour?: number;
  notify_week_day?: number;
  notify_week_hour?: number;
  notify_month_day?: number;
  notify_month_hour?: number;
  /** near_deadline: the date column (by name, as the original) and how many days ahead. */
  date_column_name?: string;
  alarm_days?: number;
  [extra: string]: unknown;
}

export interface AutomationAction {
  _id: string;
  type: ActionType;
  [field: string]: unknown;
}

export interface AutomationRule {
  id: number;
  baseId: number;
  dtableUuid: string;
  runCondition: AutomationRunCondition;
  trigger: AutomationTrigger;
  actions: AutomationAction[];
  creatorId: number;
  isValid: boolean;
  nextRunAt: number | null;
}

/** The rows module's write entry (RowsService.writeMany), injected by the composition root. */
export type WriteMany = <T>(base: BaseRef, actor: Actor, work: (rows: ScopedRowWriter) => Promise<T>) => Promise<T>;

/** One action's result in a run's log. */
export interface ActionOutcome {
  _id: string;
  type: string;
  status: 'pending' | 'done' | 'failed' | 'skipped';
  detail?: string;
  error?: string;
  attempts?: number;
  /** `run_script`: what the script printed (console.log), and the CPU time it used. */
  output?: string;
  cpu_ms?: number;
}

/** Sent to a rule's creator when the rule becomes invalid (the original's `auto_rule_invalid`). */
export const MSG_TYPE_AUTOMATION_INVALID = 'auto_rule_invalid';
/** The automation `notify` action lands in the inbox like a notification rule (event-semantics §D). */
export const MSG_TYPE_AUTOMATION_NOTIFY = 'notification_rules';
/** `op_app` of an automation's writes: `automation:<rule id>:<depth>` (loop protection reads it back). */
export const AUTOMATION_APP_PREFIX = 'automation:';

export function automationApp(ruleId: number, depth: number): string {
  return `${AUTOMATION_APP_PREFIX}${ruleId}:${depth}`;
}

/** The rule id and depth of a write made by an automation; null for any other writer. */
export function automationSource(opApp: string | null): { ruleId: number; depth: number } | null {
  if (!opApp?.startsWith(AUTOMATION_APP_PREFIX)) return null;
  const [rule, depth] = opApp.slice(AUTOMATION_APP_PREFIX.length).split(':');
  const ruleId = Number(rule);
  const d = Number(depth);
  return Number.isInteger(ruleId) && Number.isInteger(d) ? { ruleId, depth: d } : null;
}
