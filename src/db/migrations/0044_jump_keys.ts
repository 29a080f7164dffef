import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.js';

/**
 * Issue 34, PostgreSQL only (SQLite's jump indexes are expression indexes it reads without the row).
 * PostgreSQL cannot read an expression index without the row, so a deep jump into a sorted or filtered
 * listing counted through heap rows. A **jump set** (rows/jump-sets.ts) keeps, for one listing shape of
 * one big table (a filter column and/or a sort column), a narrow row per listed row in `row_jump_keys`:
 * the sort value as a plain column and the filter column's cell alone; a covering index on it is read
 * index-only. `row_jump_defs` lists the sets; the trigger keeps every set of a row's table up to date in
 * the writing statement itself (tables without a set pay one probe of `row_jump_defs`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`CREATE TABLE row_jump_defs (
    id bigserial PRIMARY KEY,
    name varchar(63) NOT NULL UNIQUE,
    base_id bigint NOT NULL,
    table_id varchar(8) NOT NULL,
    filter_key varchar(64),
    filter_type varchar(8),
    sort_key varchar(64),
    sort_type varchar(8),
    descending boolean NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX row_jump_defs_table ON row_jump_defs (base_id, table_id)`.execute(db);
  await sql`CREATE TABLE row_jump_keys (
    jump_id bigint NOT NULL,
    id bigint NOT NULL,
    num float8,
    txt text COLLATE "C",
    data jsonb NOT NULL,
    PRIMARY KEY (jump_id, id)
  )`.execute(db);
  await sql`CREATE INDEX row_jump_keys_row ON row_jump_keys (id)`.execute(db);
  // The values are the expressions of filters/cell-sql.ts (postgresNumber, postgresTextC) on the row's data.
  await sql`CREATE FUNCTION base_rows_jump_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM row_jump_defs d
                 WHERE d.base_id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.base_id ELSE NEW.base_id END)
                   AND d.table_id = (CASE WHEN TG_OP = 'DELETE' THEN OLD.table_id ELSE NEW.table_id END)) THEN
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' THEN
    DELETE FROM row_jump_keys WHERE id = OLD.id;
  END IF;
  IF TG_OP <> 'DELETE' AND (NEW.data->>'_archived') IS DISTINCT FROM 'true' THEN
    INSERT INTO row_jump_keys (jump_id, id, num, txt, data)
    SELECT d.id, NEW.id,
      CASE WHEN d.sort_type = 'number' AND jsonb_typeof(NEW.data -> d.sort_key) = 'number' THEN (NEW.data ->> d.sort_key)::float8 END,
      CASE WHEN d.sort_type = 'text' THEN NEW.data ->> d.sort_key END,
      CASE WHEN d.filter_key IS NOT NULL AND NEW.data ? d.filter_key THEN jsonb_build_object(d.filter_key, NEW.data -> d.filter_key) ELSE '{}'::jsonb END
    FROM row_jump_defs d WHERE d.base_id = NEW.base_id AND d.table_id = NEW.table_id
    ON CONFLICT (jump_id, id) DO UPDATE SET num = EXCLUDED.num, txt = EXCLUDED.txt, data = EXCLUDED.data;
  END IF;
  RETURN NULL;
END $$`.execute(db);
  await sql`CREATE TRIGGER base_rows_jump_keys AFTER INSERT OR UPDATE OF data, base_id, table_id OR DELETE ON base_rows
    FOR EACH ROW EXECUTE FUNCTION base_rows_jump_keys()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`DROP TRIGGER IF EXISTS base_rows_jump_keys ON base_rows`.execute(db);
  await sql`DROP FUNCTION IF EXISTS base_rows_jump_keys()`.execute(db);
  await sql`DROP TABLE IF EXISTS row_jump_keys`.execute(db);
  await sql`DROP TABLE IF EXISTS row_jump_defs`.execute(db);
}
