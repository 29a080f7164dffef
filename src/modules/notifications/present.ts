import { isoSeconds } from '../../shared/time.js';
import type { NotificationRow } from './inbox.repository.js';
import type { RuleListing } from './rules.repository.js';

/** The contract §5.2 record. */
export function ruleRecord(row: RuleListing) {
  return {
    id: Number(row.id),
    dtable_uuid: row.dtable_uuid,
    run_condition: row.run_condition,
    trigger: JSON.parse(row.trigger) as Record<string, unknown>,
    action: JSON.parse(row.action) as Record<string, unknown>,
    creator: row.creator_name,
    ctime: isoSeconds(Number(row.ctime)),
    last_trigger_time: isoSeconds(row.last_trigger_time === null ? null : Number(row.last_trigger_time)),
    is_valid: Number(row.is_valid) === 1 ? 1 : 0,
  };
}

function parseDetail(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** `/api/v2.1/notifications/` item: `type`, `time`, boolean `seen` (plus `msg_type`, `dtable_uuid`). */
export function accountNotice(row: NotificationRow) {
  return {
    id: Number(row.id),
    type: row.msg_type,
    msg_type: row.msg_type,
    dtable_uuid: row.dtable_uuid ?? '',
    detail: parseDetail(row.detail),
    time: isoSeconds(Number(row.created_at)),
    seen: Number(row.seen) === 1,
  };
}

/** Base-scoped (contract §8.7) item: `username`, `msg_type`, `created_at`, `seen` as 0/1. */
export function baseNotice(row: NotificationRow, username: string) {
  return {
    id: Number(row.id),
    username,
    dtable_uuid: row.dtable_uuid ?? '',
    msg_type: row.msg_type,
    created_at: isoSeconds(Number(row.created_at)),
    detail: parseDetail(row.detail),
    seen: Number(row.seen) === 1 ? 1 : 0,
  };
}
