import { Migrator, sql, type Kysely, type MigrationProvider } from 'kysely';
import { isPostgres } from './migrations/helpers.js';
import { migrations } from './migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Apply every pending migration; throws with the failing migration's error. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider, ...(await migrationSchema(db)) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

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
