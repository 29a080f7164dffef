export interface OidcLoginsTable {
  /** SHA-256 of the `state` sent to the provider; the row is deleted when the callback uses it. */
  state_hash: string;
  code_verifier: string;
  nonce: string;
  created_at: number;
}
