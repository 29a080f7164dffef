import type { Kysely } from 'kysely';
import { bigint, withId } from './helpers.js';

/**
 * Issue 33 item 5. `audit_log` is append-only and hash-chained: each row stores the previous row's
 * hash and its own, sha256(prev_hash + canonical JSON of its fields). `audit_head` is one row: the
 * chain's last hash and sequence number (its row lock serializes appends on PostgreSQL) and the
 * anchor left by retention pruning (the hash and sequence of the last pruned row).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withId(db, db.schema.createTable('audit_log'))
    .addColumn('seq', bigint, (c) => c.notNull().unique())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('action', 'varchar(64)', (c) => c.notNull())
    .addColumn('actor', 'varchar(255)', (c) => c.notNull())
    .addColumn('ip', 'varchar(64)', (c) => c.notNull())
    .addColumn('base_id', bigint)
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('detail', 'text', (c) => c.notNull())
    .addColumn('prev_hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('hash', 'varchar(64)', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_created').on('audit_log').columns(['created_at']).execute();
  await db.schema.createIndex('audit_log_base').on('audit_log').columns(['base_id', 'seq']).execute();
  await db.schema.createIndex('audit_log_action').on('audit_log').columns(['action', 'target']).execute();
  await db.schema
    .createTable('audit_head')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('seq', bigint, (c) => c.notNull())
    .addColumn('hash', 'varchar(64)', (c) => c.notNull())
    .addColumn('anchor_seq', bigint, (c) => c.notNull())
    .addColumn('anchor_hash', 'varchar(64)', (c) => c.notNull())
    .execute();
  const genesis = '0'.repeat(64);
  await (db as Kysely<{ audit_head: { id: number; seq: number; hash: string; anchor_seq: number; anchor_hash: string } }>)
    .insertInto('audit_head')
    .values({ id: 1, seq: 0, hash: genesis, anchor_seq: 0, anchor_hash: genesis })
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_head').execute();
  await db.schema.dropTable('audit_log').execute();
}
