import { Migrator, sql, type Kysely, type MigrationProvider } from 'kysely';
import { isPostgres } from './migrations/helpers.js';
import { migrations } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Apply every pending migration; throws with the failing migration's error. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  if (await allApplied(db)) return [];
  const migrator = new Migrator({ db, provider, ...(await migrationSchema(db)) });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    // Kysely's existence check reads the catalog of every schema (has_schema_privilege per schema,
    // each table's columns): another schema dropped or migrated meanwhile fails it with 3F000, 42P01
    // naming that schema's table, or 42703 naming a column it was adding (tests run theirs side by side). Nothing was applied by that check, and a
    // migration runs in its own transaction with applied ones recorded, so running again is safe.
    const code = (error as { code?: string }).code;
    if (!CATALOG_RACE_CODES.has(code ?? '') || attempt >= 5) throw error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * True when every known migration is recorded: one read of this schema's own bookkeeping table, where
 * Kysely's Migrator first inspects the catalog of every schema (slow with many schemas, as in tests and
 * multi-tenant databases). Anything else — no table yet, a pending migration, an error — takes the
 * Migrator's way, which holds its lock while applying.
 */
async function allApplied(db: Kysely<any>): Promise<boolean> {
  try {
    const exists = isPostgres(db)
      ? (await sql<{ found: string | null }>`select to_regclass('kysely_migration')::text as found`.execute(db)).rows[0]?.found
      : (await sql<{ found: string }>`select name as found from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(db)).rows[0]?.found;
    if (!exists) return false;
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    const applied = new Set(rows.map((r) => r.name));
    return Object.keys(migrations).every((name) => applied.has(name));
  } catch {
    return false;
  }
}

/** PostgreSQL's invalid_schema_name, undefined_table and undefined_column. */
const CATALOG_RACE_CODES = new Set(['3F000', '42P01', '42703']);

/**
 * On PostgreSQL, pin Kysely's bookkeeping tables to the connection's current schema: without it the
 * Migrator's existence checks see other schemas' `kysely_migration*` tables (tests run one schema per
 * app side by side) and race.
 */
async function migrationSchema(db: Kysely<any>): Promise<{ migrationTableSchema?: string }> {
  if (!isPostgres(db)) return {};
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  return schema ? { migrationTableSchema: schema } : {};
}
