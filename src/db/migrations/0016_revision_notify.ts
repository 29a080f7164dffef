import type { Kysely } from 'kysely';
import { isPostgres, sql } from './helpers.js';

/**
 * PostgreSQL only: every change of a base's revision (every committed write to the base, see 0007)
 * and every removal of a base's metadata sends `NOTIFY basegate_revision, '<schema>:<base id>'` from
 * the writing transaction, delivered to listeners when it commits. Instances keep their cached
 * whole-base reads current with it instead of a revision query per read (docs/base-data.md). A
 * trigger, so no writer can forget it; identical notifications of one transaction are sent once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`
    CREATE OR REPLACE FUNCTION basegate_revision_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('basegate_revision', TG_TABLE_SCHEMA || ':' || OLD.base_id);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER base_metadata_revision_notify
    AFTER UPDATE OF revision OR DELETE ON base_metadata
    FOR EACH ROW EXECUTE FUNCTION basegate_revision_notify()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`DROP TRIGGER IF EXISTS base_metadata_revision_notify ON base_metadata`.execute(db);
  await sql`DROP FUNCTION IF EXISTS basegate_revision_notify()`.execute(db);
}
