import type { SharedView } from '../access/index.js';
/** The shapes of a notification rule, as stored and as the engine sees it. */

export type RunCondition = 'per_update' | 'per_day';
export type TriggerCondition = 'rows_modified' | 'filters_satisfy' | 'rows_added' | 'near_deadline';

/** The run_condition each trigger condition needs (the specification's combinations plus `rows_added`). */
export const RUN_CONDITION_OF: Readonly<Record<TriggerCondition, RunCondition>> = {
  rows_modified: 'per_update',
  filters_satisfy: 'per_update',
  rows_added: 'per_update',
  near_deadline: 'per_day',
};

/** The original's default hour when `notify_hour` is absent. */
export const DEFAULT_NOTIFY_HOUR = 12;

/** The trigger after validation: known keys normalized, unknown client keys kept as sent. */
export interface RuleTrigger {
  rule_name: string;
  table_id: string;
  view_id: string;
  condition: TriggerCondition;
  watch_all_columns?: boolean;
  column_keys?: string[];
  filters?: unknown[];
  filter_conjunction?: 'And' | 'Or';
  date_column_name?: string;
  alarm_days?: number;
  notify_hour?: number;
  [extra: string]: unknown;
}

export interface RuleAction {
  type: 'notify';
  users: string[];
  users_column_key?: string;
  default_msg: string;
  [extra: string]: unknown;
}

/** A stored rule in domain form. */
export interface Rule {
  id: number;
  baseId: number;
  dtableUuid: string;
  runCondition: RunCondition;
  trigger: RuleTrigger;
  action: RuleAction;
  creatorId: number;
  ctime: number;
  lastTriggerTime: number | null;
  isValid: boolean;
  invalidReason: string | null;
  nextRunAt: number | null;
}

/** The `detail` of a `notification_rules` notification (contract and event-semantics §D). */
export interface RuleNotificationDetail {
  table_id: string;
  view_id: string;
  condition: TriggerCondition;
  rule_id: number;
  rule_name: string;
  msg: string;
  row_id_list: string[];
}

export const MSG_TYPE_RULE = 'notification_rules';
/** Sent to a rule's creator when the rule becomes invalid. */
export const MSG_TYPE_RULE_INVALID = 'notification_rule_invalid';

/** A user who may receive notifications of a base: the owner and everyone it is shared with. */
export interface Member {
  userId: number;
  name: string;
  /** Set when the user reaches the base through view shares only: the views they see (`access`'s `seesRow`). */
  views?: SharedView[];
}

/** Members keyed by virtual id. */
export type Members = ReadonlyMap<string, Member>;
