import { isoSeconds } from '../../shared/time.js';
import type { AutomationListing } from './rules.repository.js';
import type { RunRow } from './runs.repository.js';
import { maskSecrets } from './secrets.js';

/** The documented record: `is_valid` boolean, `trigger_count`, `last_trigger_time` ("" before the first run). */
export function automationRecord(row: AutomationListing) {
  return {
    id: Number(row.id),
    dtable_uuid: row.dtable_uuid,
    run_condition: row.run_condition,
    trigger: JSON.parse(row.trigger) as Record<string, unknown>,
    actions: maskSecrets(JSON.parse(row.actions) as Array<Record<string, unknown>>),
    creator: row.creator_name,
    ctime: isoSeconds(Number(row.ctime)),
    last_trigger_time: isoSeconds(row.last_trigger_time === null ? null : Number(row.last_trigger_time)),
    is_valid: Number(row.is_valid) === 1,
    trigger_count: Number(row.trigger_count),
    ...(row.invalid_reason ? { invalid_reason: row.invalid_reason } : {}),
  };
}

export function runRecord(row: RunRow) {
  return {
    id: Number(row.id),
    rule_id: Number(row.rule_id),
    trigger: row.trigger,
    row_ids: JSON.parse(row.row_ids) as string[],
    depth: Number(row.depth),
    status: row.status,
    actions: JSON.parse(row.outcomes) as Array<Record<string, unknown>>,
    error: row.error ?? '',
    attempts: Number(row.attempts),
    created_at: isoSeconds(Number(row.created_at)),
    finished_at: isoSeconds(row.finished_at === null ? null : Number(row.finished_at)),
    duration_ms: Number(row.duration_ms),
  };
}
