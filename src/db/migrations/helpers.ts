import { sql, type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely } from 'kysely';
import { PostgresAdapter } from 'kysely';

export function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** An auto-incrementing integer primary key on both engines. */
export function withId<T extends string>(db: Kysely<unknown>, table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'> {
  return isPostgres(db)
    ? table.addColumn('id', 'bigserial', (c) => c.primaryKey())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/** Millisecond timestamps and other large integers: bigint on PostgreSQL, integer on SQLite. */
export const bigint = 'bigint' as const;

export const notNull = (c: ColumnDefinitionBuilder) => c.notNull();

export { sql };

/**
 * PostgreSQL: statement-level triggers on `base_rows` that keep a table of summed deltas (group sets 0046,
 * position blocks 0049): the function `base_rows_<name>` and its triggers `base_rows_<name>_{insert,update,delete}`
 * over the transition tables `<prefix>_new_rows` / `<prefix>_old_rows`. One call per writing statement; nothing
 * is done while `definitions` is empty. `signed(table, sign)` selects a transition table's rows signed +1 or
 * −1 (an update: the old rows −1 and the new +1), `insert(parts)` writes their sums.
 */
export async function createDeltaTriggers(
  db: Kysely<unknown>,
  spec: { name: string; prefix: string; definitions: string; signed: (table: string, sign: string) => string; insert: (parts: string) => string },
): Promise<void> {
  const { name, signed, insert } = spec;
  const [fresh, old] = [`${spec.prefix}_new_rows`, `${spec.prefix}_old_rows`];
  await sql.raw(`CREATE FUNCTION base_rows_${name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM ${spec.definitions}) THEN RETURN NULL; END IF;
  IF TG_OP = 'INSERT' THEN
    ${insert(signed(fresh, '1'))}
  ELSIF TG_OP = 'DELETE' THEN
    ${insert(signed(old, '-1'))}
  ELSE
    ${insert(`${signed(old, '-1')} UNION ALL ${signed(fresh, '1')}`)}
  END IF;
  RETURN NULL;
END $$`).execute(db);
  await sql.raw(`CREATE TRIGGER base_rows_${name}_insert AFTER INSERT ON base_rows
      REFERENCING NEW TABLE AS ${fresh} FOR EACH STATEMENT EXECUTE FUNCTION base_rows_${name}()`).execute(db);
  await sql.raw(`CREATE TRIGGER base_rows_${name}_update AFTER UPDATE ON base_rows
      REFERENCING OLD TABLE AS ${old} NEW TABLE AS ${fresh} FOR EACH STATEMENT EXECUTE FUNCTION base_rows_${name}()`).execute(db);
  await sql.raw(`CREATE TRIGGER base_rows_${name}_delete AFTER DELETE ON base_rows
      REFERENCING OLD TABLE AS ${old} FOR EACH STATEMENT EXECUTE FUNCTION base_rows_${name}()`).execute(db);
}

/** Drops the `base_rows_<name>_{insert,update,delete}` triggers (both engines) and, on PostgreSQL, their function (a migration's down). */
export async function dropDeltaTriggers(db: Kysely<unknown>, name: string): Promise<void> {
  const on = isPostgres(db) ? ' ON base_rows' : '';
  for (const op of ['insert', 'update', 'delete']) await sql.raw(`DROP TRIGGER IF EXISTS base_rows_${name}_${op}${on}`).execute(db);
  if (isPostgres(db)) await sql.raw(`DROP FUNCTION IF EXISTS base_rows_${name}()`).execute(db);
}
