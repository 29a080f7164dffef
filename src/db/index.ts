export { connect, isUniqueViolation } from './connect.js';
export type { DbHandle, ConnectOptions } from './connect.js';
export { migrateToLatest } from './migrate.js';
export type { Database, Db, Executor, DialectName } from './database.js';
