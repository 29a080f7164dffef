import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.js';

/**
 * Issue 34 (import of 10,000,000 rows), PostgreSQL only: inserted rows reach the jump sets once per
 * statement instead of once per row. The row trigger of 0044/0047 ran a PL/pgSQL call and a probe of
 * `row_jump_defs` for every inserted row, also into tables without a set: 15–34 µs a row, about a third
 * of a 1,000-row append's time in the database (EXPLAIN ANALYZE of a 10,000-row insert, load 6–7:
 * 147–335 ms in the trigger of 551–1,008 ms; 0.25 ms of 470 ms with this one). Inserts now run one
 * statement trigger over the statement's new rows (a transition table, as 0046's group sets), which
 * writes the same entries; updates and deletes keep the row trigger (PostgreSQL allows no transition
 * table on a trigger limited to columns, `UPDATE OF data, …`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql.raw(`CREATE FUNCTION base_rows_jump_keys_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM row_jump_defs) THEN RETURN NULL; END IF;
  INSERT INTO row_jump_keys (jump_id, id, num, txt, data)
  SELECT d.id, n.id,
    CASE WHEN d.sort_type = 'number' AND jsonb_typeof(n.data -> d.sort_key) = 'number' THEN (n.data ->> d.sort_key)::float8 END,
    CASE WHEN d.sort_type = 'text' THEN n.data ->> d.sort_key END,
    CASE
      WHEN d.cells IS NOT NULL THEN (SELECT coalesce(jsonb_object_agg(k.key, n.data -> k.key), '{}'::jsonb) FROM unnest(d.cells) AS k(key) WHERE n.data ? k.key)
      WHEN d.filter_key IS NOT NULL AND n.data ? d.filter_key THEN jsonb_build_object(d.filter_key, n.data -> d.filter_key)
      ELSE '{}'::jsonb
    END
  FROM jump_new_rows n JOIN row_jump_defs d ON d.base_id = n.base_id AND d.table_id = n.table_id
  WHERE (n.data->>'_archived') IS DISTINCT FROM 'true'
  ON CONFLICT (jump_id, id) DO UPDATE SET num = EXCLUDED.num, txt = EXCLUDED.txt, data = EXCLUDED.data;
  RETURN NULL;
END $$`).execute(db);
  await sql`DROP TRIGGER base_rows_jump_keys ON base_rows`.execute(db);
  await sql`CREATE TRIGGER base_rows_jump_keys AFTER UPDATE OF data, base_id, table_id OR DELETE ON base_rows
    FOR EACH ROW EXECUTE FUNCTION base_rows_jump_keys()`.execute(db);
  await sql`CREATE TRIGGER base_rows_jump_keys_insert AFTER INSERT ON base_rows
    REFERENCING NEW TABLE AS jump_new_rows FOR EACH STATEMENT EXECUTE FUNCTION base_rows_jump_keys_inserted()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`DROP TRIGGER base_rows_jump_keys_insert ON base_rows`.execute(db);
  await sql`DROP FUNCTION base_rows_jump_keys_inserted()`.execute(db);
  await sql`DROP TRIGGER base_rows_jump_keys ON base_rows`.execute(db);
  await sql`CREATE TRIGGER base_rows_jump_keys AFTER INSERT OR UPDATE OF data, base_id, table_id OR DELETE ON base_rows
    FOR EACH ROW EXECUTE FUNCTION base_rows_jump_keys()`.execute(db);
}
