import type { Kysely } from 'kysely';
import { bigint } from './helpers.js';

/**
 * Issue 33. `api_tokens` gains a scope (JSON: tables, operations, networks), its own rate budget,
 * an expiry, the previous secret kept through a rotation's overlap window, and the last client
 * address. `api_token_usage` counts each token's requests per UTC day (written in batches).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_tokens')
    .addColumn('scope', 'text')
    .execute();
  await db.schema.alterTable('api_tokens').addColumn('rate_per_minute', 'integer').execute();
  await db.schema.alterTable('api_tokens').addColumn('expires_at', bigint).execute();
  await db.schema.alterTable('api_tokens').addColumn('previous_token_hash', 'varchar(64)').execute();
  await db.schema.alterTable('api_tokens').addColumn('previous_expires_at', bigint).execute();
  await db.schema.alterTable('api_tokens').addColumn('last_ip', 'varchar(64)').execute();
  await db.schema.createIndex('api_tokens_previous_hash').on('api_tokens').column('previous_token_hash').execute();
  await db.schema
    .createTable('api_token_usage')
    .addColumn('token_id', bigint, (c) => c.notNull().references('api_tokens.id').onDelete('cascade'))
    .addColumn('day', 'varchar(10)', (c) => c.notNull())
    .addColumn('requests', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('api_token_usage_pk', ['token_id', 'day'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('api_token_usage').execute();
  await db.schema.dropIndex('api_tokens_previous_hash').execute();
  for (const column of ['last_ip', 'previous_expires_at', 'previous_token_hash', 'expires_at', 'rate_per_minute', 'scope']) {
    await db.schema.alterTable('api_tokens').dropColumn(column).execute();
  }
}
