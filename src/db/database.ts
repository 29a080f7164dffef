import type { Kysely, Transaction } from 'kysely';
import type { AccountTokensTable, UsersTable } from '../modules/accounts/accounts.table.js';
import type {
  BaseMetadataTable,
  BaseSharesTable,
  BasesTable,
  ExternalLinksTable,
  WorkspacesTable,
} from '../modules/workspaces/workspaces.table.js';
import type { BaseLinksTable, BaseRowsTable, HeldUpdatesTable, RowIndexesTable } from '../modules/rows/rows.table.js';
import type { EventColumnsTable, EventConsumersTable, EventsTable, StructureEventsTable } from '../modules/events/events.table.js';
import type { BaseGroupSharesTable, GroupMembersTable, GroupsTable, ViewSharesTable } from '../modules/groups/groups.table.js';
import type { RealtimePresenceTable } from '../modules/realtime/realtime.table.js';
import type { RateLimitOverridesTable } from '../modules/limits/limits.table.js';
import type { ApiTokensTable, ApiTokenUsageTable, CredentialVersionsTable } from '../modules/tokens/tokens.table.js';
import type {
  WebhookAlertsTable,
  DeliveryWorkersTable,
  WebhookPayloadsTable,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhooksTable,
} from '../modules/webhooks/webhooks.table.js';
import type {
  NotificationRuleMarksTable,
  NotificationRulesTable,
  NotificationsTable,
  SchedulerLeasesTable,
} from '../modules/notifications/notifications.table.js';
import type { RowCommentsTable } from '../modules/comments/comments.table.js';
import type { AutomationMarksTable, AutomationRulesTable, AutomationRunsTable } from '../modules/automations/automations.table.js';
import type { BaseSnapshotsTable, OperationLogIndexedTable, OperationLogRowsTable, OperationLogTable, SnapshotBlobsTable, SnapshotFilesTable, TrashedTableRowsTable, TrashedTablesTable } from '../modules/history/history.table.js';
import type { HeldEventBatchesTable, HeldEventColumnsTable, HeldEventsTable } from '../modules/events/held-events.table.js';
import type { AuditHeadTable, AuditLogTable, AuditPendingTable, AuditWritersTable } from '../modules/audit/audit.table.js';
import type { ImportJobsTable } from '../modules/transfer/import-jobs.table.js';
import type { AccountDevicesTable, RecoveryCodesTable, TrustedDevicesTable, UserTwoFactorTable } from '../modules/accounts/two-factor.table.js';
import type { OidcLoginsTable } from '../modules/sso/sso.table.js';

/** Every table, assembled from the modules' `*.table.ts` files. */
export interface Database {
  users: UsersTable;
  account_tokens: AccountTokensTable;
  workspaces: WorkspacesTable;
  bases: BasesTable;
  base_shares: BaseSharesTable;
  external_links: ExternalLinksTable;
  base_metadata: BaseMetadataTable;
  base_rows: BaseRowsTable;
  held_updates: HeldUpdatesTable;
  row_indexes: RowIndexesTable;
  base_links: BaseLinksTable;
  events: EventsTable;
  event_columns: EventColumnsTable;
  event_consumers: EventConsumersTable;
  structure_events: StructureEventsTable;
  rate_limit_overrides: RateLimitOverridesTable;
  api_tokens: ApiTokensTable;
  api_token_usage: ApiTokenUsageTable;
  credential_versions: CredentialVersionsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_alerts: WebhookAlertsTable;
  delivery_workers: DeliveryWorkersTable;
  webhook_payloads: WebhookPayloadsTable;
  notification_rules: NotificationRulesTable;
  notifications: NotificationsTable;
  notification_rule_marks: NotificationRuleMarksTable;
  scheduler_leases: SchedulerLeasesTable;
  realtime_presence: RealtimePresenceTable;
  row_comments: RowCommentsTable;
  operation_log: OperationLogTable;
  operation_log_rows: OperationLogRowsTable;
  operation_log_indexed: OperationLogIndexedTable;
  trashed_tables: TrashedTablesTable;
  trashed_table_rows: TrashedTableRowsTable;
  base_snapshots: BaseSnapshotsTable;
  snapshot_files: SnapshotFilesTable;
  snapshot_blobs: SnapshotBlobsTable;
  automation_rules: AutomationRulesTable;
  automation_runs: AutomationRunsTable;
  automation_marks: AutomationMarksTable;
  held_events: HeldEventsTable;
  held_event_columns: HeldEventColumnsTable;
  held_event_batches: HeldEventBatchesTable;
  audit_log: AuditLogTable;
  audit_head: AuditHeadTable;
  audit_pending: AuditPendingTable;
  audit_writers: AuditWritersTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  base_group_shares: BaseGroupSharesTable;
  view_shares: ViewSharesTable;
  import_jobs: ImportJobsTable;
  user_two_factor: UserTwoFactorTable;
  two_factor_recovery_codes: RecoveryCodesTable;
  account_devices: AccountDevicesTable;
  two_factor_trusted_devices: TrustedDevicesTable;
  oidc_logins: OidcLoginsTable;
}

export type Db = Kysely<Database>;
/** The database or a transaction: repositories take this first so writes join the caller's transaction. */
export type Executor = Kysely<Database> | Transaction<Database>;
export type DialectName = 'sqlite' | 'postgres';
