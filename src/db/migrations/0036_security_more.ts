import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Issue 33, round 2: trusted devices of two-factor sign-in (`X-SEAFILE-2FA-TRUST-DEVICE: 1` at a sign-in
 * with a code answers `X-SEAFILE-S2FA: <key>`; that key skips the code at later sign-ins of the same
 * user until it expires). Only the key's SHA-256 is stored.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('two_factor_trusted_devices'))
    .addColumn('user_id', bigint, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key_hash', 'varchar(64)', (c) => c.notNull().unique())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('two_factor_trusted_user').on('two_factor_trusted_devices').columns(['user_id', 'expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('two_factor_trusted_devices').execute();
}
