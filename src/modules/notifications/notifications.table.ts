import type { Generated } from 'kysely';

export interface NotificationRulesTable {
  id: Generated<number>;
  base_id: number;
  dtable_uuid: string;
  /** Copied from `trigger.table_id`: the engine looks rules up by (base, table). */
  table_id: string;
  /** `per_update` or `per_day`. */
  run_condition: string;
  /** Copied from `trigger.condition`. */
  condition: string;
  /** JSON text of the normalized trigger object. */
  trigger: string;
  /** JSON text of the normalized action object. */
  action: string;
  creator_id: number;
  ctime: number;
  updated_at: number;
  last_trigger_time: number | null;
  is_valid: Generated<number>;
  /** Why the rule became invalid (shown to its creator); null while valid. */
  invalid_reason: string | null;
  /** Deadline rules: when the next daily run is due (ms); null for per_update rules. */
  next_run_at: number | null;
  /** `base_metadata.version` the rule was last checked against. */
  meta_version: Generated<number>;
  /** The outbox position at creation: only events with a higher id can fire a per_update rule. */
  start_event_id: Generated<number>;
}

export interface NotificationsTable {
  id: Generated<number>;
  user_id: number;
  base_id: number | null;
  dtable_uuid: string | null;
  msg_type: string;
  /** JSON text. */
  detail: string;
  created_at: number;
  seen: Generated<number>;
  /** When the e-mail fallback is due; null once read, mailed, or skipped. */
  email_due_at: number | null;
  emailed_at: number | null;
}

export interface NotificationRuleMarksTable {
  rule_id: number;
  row_id: string;
  /** `update` (de-duplication window) or a `YYYY-MM-DD` day (deadline reminder sent). */
  mark: string;
  at: number;
}

export interface SchedulerLeasesTable {
  name: string;
  /** Random id of the scheduler instance holding the lease. */
  holder: string;
  lease_until: number;
  last_started_at: number | null;
  last_finished_at: number | null;
}
