import type { Generated } from 'kysely';

/** What an audited action records, appended or chained. */
interface AuditFields {
  id: Generated<number>;
  created_at: number;
  /** e.g. `login.success`, `api_token.create`, `base.delete` (docs/security.md lists them). */
  action: string;
  /** Who acted: the account's e-mail, the login name tried, or `api-token:<id>`. */
  actor: string;
  ip: string;
  /** The base the action concerns, for the owner's per-base view. */
  base_id: number | null;
  target: string;
  /** JSON {before?, after?}, secrets redacted. */
  detail: string;
}

/** One audited action (migration 0026_audit_log); never updated, deleted only by retention pruning. */
export interface AuditLogTable extends AuditFields {
  /** Position in the chain: 1, 2, 3… without gaps. */
  seq: number;
  prev_hash: string;
  hash: string;
  /** sha256 of the fields when the row was appended (migration 0037); null on rows sealed before it. */
  digest: string | null;
}

/**
 * An appended row not yet in the chain (migration 0037_audit_pending), PostgreSQL: written in the
 * audited action's transaction, moved into `audit_log` by the sealer (audit/sealer.ts). (SQLite chains
 * at append; rows pending there are left from before.)
 */
export interface AuditPendingTable extends AuditFields {
  /** sha256 of the other fields (chain.ts `fieldsDigest`). */
  digest: string;
  /** The appending instance (`audit_writers.id`) and its count of appends with this row (migration 0039); null on older rows. */
  writer: string | null;
  writer_seq: number | null;
}

/** One appending instance's count of appends and how far the sealer has chained them (migration 0039). */
export interface AuditWritersTable {
  id: string;
  appended: number;
  sealed: number;
}

/** The chain's head (one row, id 1) and the anchor left by pruning. */
export interface AuditHeadTable {
  id: number;
  seq: number;
  hash: string;
  anchor_seq: number;
  anchor_hash: string;
}
