import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type DatabaseConnection } from 'kysely';

/**
 * A PostgreSQL Kysely whose every statement goes to `connection` (no pool, no server; transactions are
 * no-ops): for code that builds or intercepts statements without sending them (rows/no-database.ts,
 * and tests that record what would be sent).
 */
export function connectionKysely<DB>(connection: DatabaseConnection): Kysely<DB> {
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => ({
        init: async () => {},
        acquireConnection: async () => connection,
        beginTransaction: async () => {},
        commitTransaction: async () => {},
        rollbackTransaction: async () => {},
        releaseConnection: async () => {},
        destroy: async () => {},
      }),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}
