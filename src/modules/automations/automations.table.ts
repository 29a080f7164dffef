import type { Generated } from 'kysely';

export interface AutomationRulesTable {
  id: Generated<number>;
  base_id: number;
  dtable_uuid: string;
  /** Copied from `trigger.table_id`: the consumer looks rules up by (base, table). */
  table_id: string;
  /** `per_update`, `per_day`, `per_week` or `per_month`. */
  run_condition: string;
  /** Copied from `trigger.condition`. */
  condition: string;
  /** JSON text of the normalized trigger object. */
  trigger: string;
  /** JSON text of the normalized action list. */
  actions: string;
  creator_id: number;
  ctime: number;
  updated_at: number;
  last_trigger_time: number | null;
  trigger_count: Generated<number>;
  is_valid: Generated<number>;
  invalid_reason: string | null;
  /** Periodic rules: when the next run is due (ms); null for per_update rules. */
  next_run_at: number | null;
  /** The outbox position at creation: only events with a higher id fire a per_update rule. */
  start_event_id: Generated<number>;
}

export interface AutomationRunsTable {
  id: Generated<number>;
  rule_id: number;
  base_id: number;
  /** The trigger condition that started the run. */
  trigger: string;
  /** JSON list of row ids. */
  row_ids: string;
  /** JSON of the triggering row, or null. */
  row: string | null;
  /** How many automation writes led to this run (loop protection). */
  depth: Generated<number>;
  /** `pending`, `done`, `failed`, `stopped` (chain depth) or `skipped` (per-minute limit). */
  status: string;
  /** JSON list of `{ _id, type, status, detail?, error? }`. */
  outcomes: string;
  error: string | null;
  attempts: Generated<number>;
  next_attempt_at: number | null;
  created_at: number;
  finished_at: number | null;
  duration_ms: Generated<number>;
}

/** near_deadline: a row fired once per deadline (`mark` = its deadline value). */
export interface AutomationMarksTable {
  rule_id: number;
  row_id: string;
  mark: string;
  at: number;
}
