export interface UsersTable {
  id: import('kysely').Generated<number>;
  /** Public id `<32hex>@auth.local`; what the API calls a user's id or username. */
  virtual_id: string;
  email: string;
  name: string;
  password_hash: string;
  is_staff: number;
  is_active: number;
  email_notification: number;
  created_at: number;
}

export interface AccountTokensTable {
  user_id: number;
  /** SHA-256 of the 40-hex token; the plaintext is never stored. */
  token_hash: string;
  /** Random salt the stable token is derived from; rotating it revokes the token. */
  token_salt: string;
  created_at: number;
}
