export interface UserTwoFactorTable {
  user_id: number;
  /** The TOTP secret (base32), AES-256-GCM encrypted with a key derived from SECRET_KEY; null when only forced. */
  secret_enc: string | null;
  /** 1 once the user confirmed enrolment with a code: sign-in then requires a code. */
  enabled: number;
  /** The last TOTP time step accepted; a code of this step or earlier is refused (no replay). */
  last_step: number;
  /** Set by an admin (`PUT /api/v2.1/admin/users/{user_id}/two-factor-auth/`). */
  force_2fa: number;
  updated_at: number;
}

export interface RecoveryCodesTable {
  id: import('kysely').Generated<number>;
  user_id: number;
  /** SHA-256 of the recovery code; the code itself is shown once. */
  code_hash: string;
  used_at: number | null;
}

export interface AccountDevicesTable {
  id: import('kysely').Generated<number>;
  user_id: number;
  platform: string;
  device_id: string;
  device_name: string;
  client_version: string;
  /** SHA-256 of the device's Account-Token; the token is derived from the salt, never stored. */
  token_hash: string;
  token_salt: string;
  created_at: number;
  last_accessed: number;
  last_login_ip: string;
}

/** A device trusted to skip the two-factor code (`X-SEAFILE-S2FA`) until `expires_at`. */
export interface TrustedDevicesTable {
  id: import('kysely').Generated<number>;
  user_id: number;
  /** SHA-256 of the key handed out once in `X-SEAFILE-S2FA`. */
  key_hash: string;
  created_at: number;
  expires_at: number;
}
