import { sql, type Kysely } from 'kysely';

/**
 * Issue 33: an audited write pays for every index of `audit_log` (on SQLite in the write's own
 * transaction). Two of them now hold only the rows they serve:
 * - the per-base view's (base_id, seq) only rows with a base (sign-ins and admin actions have none);
 * - the lookup of "this API-Token was used from this address before" (tokens' new-network rows)
 *   replaces the (action, target) index, which every row paid for. A filter by action walks the chain
 *   from its newest row instead (the admin view, a page at a time).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('audit_log_action').execute();
  await db.schema.dropIndex('audit_log_base').execute();
  await sql`CREATE INDEX audit_log_base ON audit_log (base_id, seq) WHERE base_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX audit_log_new_network ON audit_log (target, ip) WHERE action = 'api_token.new_network'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('audit_log_new_network').execute();
  await db.schema.dropIndex('audit_log_base').execute();
  await db.schema.createIndex('audit_log_base').on('audit_log').columns(['base_id', 'seq']).execute();
  await db.schema.createIndex('audit_log_action').on('audit_log').columns(['action', 'target']).execute();
}
