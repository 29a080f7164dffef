import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.js';

/**
 * Issue 34, PostgreSQL only: jump sets (rows/jump-sets.ts) for listings filtered on several columns or
 * sorted on several. Such a set's definition names the cells it keeps (`cells`: every filter and sort
 * column's key; `spec`: those columns with their value types and the sort directions); its rows hold those cells alone as `data` (no `num`/`txt`), and its covering index
 * orders by the sort expressions of filters/cell-sql.ts on that `data`, read index-only (the index
 * includes `data`). The trigger copies the named cells for such sets, and stays as it was for the others.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`ALTER TABLE row_jump_defs ADD COLUMN cells text[]`.execute(db);
  await sql`ALTER TABLE row_jump_defs ADD COLUMN spec jsonb`.execute(db);
  await jumpKeysTrigger(`CASE
        WHEN d.cells IS NOT NULL THEN (SELECT coalesce(jsonb_object_agg(k.key, NEW.data -> k.key), '{}'::jsonb) FROM unnest(d.cells) AS k(key) WHERE NEW.data ? k.key)
        WHEN d.filter_key IS NOT NULL AND NEW.data ? d.filter_key THEN jsonb_build_object(d.filter_key, NEW.data -> d.filter_key)
        ELSE '{}'::jsonb
      END`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (!isPostgres(db)) return;
  // The sets of several columns go (the trigger of 0044 cannot keep them).
  await sql`DELETE FROM row_jump_keys WHERE jump_id IN (SELECT id FROM row_jump_defs WHERE cells IS NOT NULL)`.execute(db);
  await sql`DELETE FROM row_indexes WHERE name IN (SELECT name FROM row_jump_defs WHERE cells IS NOT NULL)`.execute(db);
  await sql`DELETE FROM row_jump_defs WHERE cells IS NOT NULL`.execute(db);
  await sql`ALTER TABLE row_jump_defs DROP COLUMN spec`.execute(db);
  await sql`ALTER TABLE row_jump_defs DROP COLUMN cells`.execute(db);
  await jumpKeysTrigger(`CASE WHEN d.filter_key IS NOT NULL AND NEW.data ? d.filter_key THEN jsonb_build_object(d.filter_key, NEW.data -> d.filter_key) ELSE '{}'::jsonb END`).execute(db);
}

/**
 * `base_rows_jump_keys()` with `data` as what a set's entry keeps of the row (0044: the filter cell;
 * here also the named cells of a set of several columns).
 */
function jumpKeysTrigger(data: string) {
  return sql.raw(`CREATE OR REPLACE FUNCTION base_rows_jump_keys() RETURNS trigger LANGUAGE plpgsql AS $$
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
      ${data}
    FROM row_jump_defs d WHERE d.base_id = NEW.base_id AND d.table_id = NEW.table_id
    ON CONFLICT (jump_id, id) DO UPDATE SET num = EXCLUDED.num, txt = EXCLUDED.txt, data = EXCLUDED.data;
  END IF;
  RETURN NULL;
END $$`);
}
