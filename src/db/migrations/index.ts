import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.js';
import * as m0002 from './0002_tokens.js';
import * as m0003 from './0003_rows_and_events.js';
import * as m0004 from './0004_rate_limit_overrides.js';
import * as m0005 from './0005_webhooks.js';
import * as m0006 from './0006_notifications.js';
import * as m0007 from './0007_base_revision.js';
import * as m0008 from './0008_subscription_start.js';
import * as m0009 from './0009_delivery_lanes.js';
import * as m0010 from './0010_webhook_payloads.js';
import * as m0011 from './0011_structure_events.js';
import * as m0012 from './0012_realtime_presence.js';
import * as m0013 from './0013_external_link_hash.js';
import * as m0014 from './0014_row_comments.js';
import * as m0015 from './0015_event_write_id.js';
import * as m0016 from './0016_revision_notify.js';
import * as m0018 from './0018_event_columns.js';
import * as m0019 from './0019_history.js';
import * as m0020 from './0020_subscriptions.js';
import * as m0021 from './0021_automations.js';
import * as m0022 from './0022_security.js';
import * as m0023 from './0023_import_staging.js';
import * as m0024 from './0024_webhook_replay.js';
import * as m0025 from './0025_webhook_pacing.js';
import * as m0026 from './0026_audit_log.js';
import * as m0027 from './0027_trash.js';
import * as m0028 from './0028_groups.js';
import * as m0029 from './0029_row_indexes.js';
import * as m0030 from './0030_history_trash_snapshots.js';
import * as m0031 from './0031_two_factor_sso.js';
import * as m0032 from './0032_automation_links.js';
import * as m0033 from './0033_import_jobs.js';
import * as m0034 from './0034_history_more.js';
import * as m0035 from './0035_import_more.js';
import * as m0036 from './0036_security_more.js';
import * as m0037 from './0037_audit_pending.js';
import * as m0038 from './0038_snapshot_files.js';
import * as m0039 from './0039_audit_writers.js';
import * as m0040 from './0040_history_row_keys.js';
import * as m0041 from './0041_audit_indexes.js';
import * as m0042 from './0042_oplog_inserts.js';
import * as m0043 from './0043_oplog_deferred_rows.js';
import * as m0044 from './0044_jump_keys.js';
import * as m0045 from './0045_oplog_files.js';
import * as m0046 from './0046_group_sets.js';
import * as m0047 from './0047_jump_many.js';
import * as m0048 from './0048_concurrent_appends.js';
import * as m0049 from './0049_position_blocks.js';
import * as m0050 from './0050_jump_keys_per_statement.js';

/**
 * Every migration, in order. Listed statically (not read from disk) so the same list works under
 * tsx, compiled output and tests. Add new ones at the end; never edit a landed one.
 */
export const migrations: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_tokens': m0002,
  '0003_rows_and_events': m0003,
  '0004_rate_limit_overrides': m0004,
  '0005_webhooks': m0005,
  '0006_notifications': m0006,
  '0007_base_revision': m0007,
  '0008_subscription_start': m0008,
  '0009_delivery_lanes': m0009,
  '0010_webhook_payloads': m0010,
  '0011_structure_events': m0011,
  '0012_realtime_presence': m0012,
  '0013_external_link_hash': m0013,
  '0014_row_comments': m0014,
  '0015_event_write_id': m0015,
  '0016_revision_notify': m0016,
  '0018_event_columns': m0018,
  '0019_history': m0019,
  '0020_subscriptions': m0020,
  '0021_automations': m0021,
  '0022_security': m0022,
  '0023_import_staging': m0023,
  '0024_webhook_replay': m0024,
  '0025_webhook_pacing': m0025,
  '0026_audit_log': m0026,
  '0027_trash': m0027,
  '0028_groups': m0028,
  '0029_row_indexes': m0029,
  '0030_history_trash_snapshots': m0030,
  '0031_two_factor_sso': m0031,
  '0032_automation_links': m0032,
  '0033_import_jobs': m0033,
  '0034_history_more': m0034,
  '0035_import_more': m0035,
  '0036_security_more': m0036,
  '0037_audit_pending': m0037,
  '0038_snapshot_files': m0038,
  '0039_audit_writers': m0039,
  '0040_history_row_keys': m0040,
  '0041_audit_indexes': m0041,
  '0042_oplog_inserts': m0042,
  '0043_oplog_deferred_rows': m0043,
  '0044_jump_keys': m0044,
  '0045_oplog_files': m0045,
  '0046_group_sets': m0046,
  '0047_jump_many': m0047,
  '0048_concurrent_appends': m0048,
  '0049_position_blocks': m0049,
  '0050_jump_keys_per_statement': m0050,
};
