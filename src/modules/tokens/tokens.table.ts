import type { Generated } from 'kysely';

/** Named API-Tokens of a base. Only the SHA-256 of the token is stored, never the token. */
export interface ApiTokensTable {
  id: Generated<number>;
  base_id: number;
  app_name: string;
  /** SHA-256 (hex) of the 40-hex token; the lookup key when a token is presented. */
  token_hash: string;
  /** The token's last four characters, so lists can show which token is which. */
  token_hint: string;
  /** `r` or `rw`. */
  permission: string;
  /** Virtual id of the user who created it (kept when that user is gone). */
  generated_by: string;
  created_at: number;
  /** Last Base-Token issued from it (ms), written behind at most once a minute. */
  last_access: number | null;
  /** JSON `{tables?, operations?, networks?}` (issue 33); null = unscoped, as before. */
  scope: string | null;
  /** The token's own gateway budget per minute; null = only the base's limits apply. */
  rate_per_minute: number | null;
  /** ms; null = never expires. */
  expires_at: number | null;
  /** The secret replaced by the last rotation, valid until `previous_expires_at` (ms). */
  previous_token_hash: string | null;
  previous_expires_at: number | null;
  /** Client address of the last Base-Token issued from it. */
  last_ip: string | null;
}

/** Requests per token and UTC day (`YYYY-MM-DD`), added in batches. */
export interface ApiTokenUsageTable {
  token_id: number;
  day: string;
  requests: number;
}

/**
 * Revocation versions of credentials (`api-token:<id>`, `external-link:<id>`, `share:<base>:<user>`).
 * A Base-Token carries the version of its credential at issue time and stops working once the
 * version moves on. No row means version 0.
 */
export interface CredentialVersionsTable {
  credential: string;
  version: number;
}
