import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Issue 33 item 3 and 4: TOTP two-factor sign-in, per-device Account-Tokens, OIDC sign-in.
 * - `user_two_factor`: one row per user who enrolled (or was forced to): the TOTP secret encrypted
 *   with a key derived from SECRET_KEY (it must be read back to check codes, so it cannot be hashed),
 *   whether it is confirmed, the last time step accepted (a code is good once), the admin's force flag.
 * - `two_factor_recovery_codes`: SHA-256 of each recovery code, and when it was used.
 * - `account_devices`: an Account-Token per signed-in device (login with platform/device_id/device_name),
 *   stored like the default one: its SHA-256 and the salt it is derived from.
 * - `oidc_logins`: a started OIDC sign-in (state hash → PKCE verifier, nonce), used once, 10 minutes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('user_two_factor')
    .addColumn('user_id', bigint, (c) => c.primaryKey().references('users.id').onDelete('cascade'))
    .addColumn('secret_enc', 'text')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_step', bigint, (c) => c.notNull().defaultTo(0))
    .addColumn('force_2fa', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await withId(db, db.schema.createTable('two_factor_recovery_codes'))
    .addColumn('user_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('used_at', bigint)
    .execute();
  await db.schema.createIndex('two_factor_recovery_user').on('two_factor_recovery_codes').columns(['user_id', 'code_hash']).execute();
  await withId(db, db.schema.createTable('account_devices'))
    .addColumn('user_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('platform', 'varchar(64)', (c) => c.notNull())
    .addColumn('device_id', 'varchar(255)', (c) => c.notNull())
    .addColumn('device_name', 'varchar(255)', (c) => c.notNull())
    .addColumn('client_version', 'varchar(64)', (c) => c.notNull().defaultTo(''))
    .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('token_salt', 'varchar(64)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_accessed', bigint, (c) => c.notNull())
    .addColumn('last_login_ip', 'varchar(64)', (c) => c.notNull().defaultTo(''))
    .addUniqueConstraint('account_devices_user_device', ['user_id', 'platform', 'device_id'])
    .execute();
  await db.schema
    .createTable('oidc_logins')
    .addColumn('state_hash', 'varchar(64)', (c) => c.primaryKey())
    .addColumn('code_verifier', 'varchar(128)', (c) => c.notNull())
    .addColumn('nonce', 'varchar(128)', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oidc_logins_created').on('oidc_logins').columns(['created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('oidc_logins').execute();
  await db.schema.dropTable('account_devices').execute();
  await db.schema.dropTable('two_factor_recovery_codes').execute();
  await db.schema.dropTable('user_two_factor').execute();
}
