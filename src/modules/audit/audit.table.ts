import type { Generated } from 'kysely';

/** One audited action (migration 0026_audit_log); never updated, deleted only by retention pruning. */
export interface AuditLogTable {
  id: Generated<number>;
  /** Position in the chain: 1, 2, 3… without gaps. */
  seq: number;
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
  prev_hash: string;
  hash: string;
}

/** The chain's head (one row, id 1) and the anchor left by pruning. */
export interface AuditHeadTable {
  id: number;
  seq: number;
  hash: string;
  anchor_seq: number;
  anchor_hash: string;
}
