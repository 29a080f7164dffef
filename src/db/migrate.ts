import { Migrator, sql, type Kysely, type MigrationProvider } from 'kysely';
import { isPostgres } from './migrations/helpers.js';
import { migrations } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Apply every pending migration; throws with the failing migration's error. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
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
