import type SQLite from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver } from 'kysely';

/**
 * Kysely's SQLite dialect with two fixes for a database other processes write to:
 * - transactions start with `BEGIN IMMEDIATE`: a deferred `BEGIN` that later upgrades to a write
 *   fails at once with SQLITE_BUSY when another connection writes (the busy timeout is not applied
 *   to an upgrade); IMMEDIATE takes the write lock up front, waiting up to the busy timeout;
 * - `ROLLBACK` is skipped when SQLite already rolled the transaction back by itself (disk full,
 *   I/O error), so the real error reaches the caller instead of "cannot rollback - no transaction is active".
 */
export class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly database: SQLite.Database) {
    super({ database });
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.database);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  constructor(private readonly database: SQLite.Database) {
    super({ database });
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.database.inTransaction) return;
    await super.rollbackTransaction(connection);
  }
}
