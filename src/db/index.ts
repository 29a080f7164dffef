export { connect, isUniqueViolation, isForeignKeyViolation, sqliteFile, SQLITE_TICK_FUNCTION } from './connect.js';
export { backupSqlite } from './backup.js';
export type { DbHandle, ConnectOptions, ConnectionLog } from './connect.js';
export { databaseFault, type DatabaseFault } from './faults.js';
export { waitForDatabase, isDatabaseReady } from './availability.js';
export { migrateToLatest } from './migrate.js';
export type { Database, Db, Executor, DialectName } from './database.js';
export { RevisionChannel, REVISION_CHANNEL } from './revision-channel.js';
export { WriteStatement } from './write-statement.js';
