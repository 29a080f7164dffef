/**
 * SQL over a base (contract §8.4): statements are parsed into an AST, checked against an allow-list,
 * mapped onto the base's tables and column keys and compiled to parameterized SQL for SQLite or
 * PostgreSQL; writes go through the rows module. See docs/sql.md.
 */
export { SqlService } from './sql.service.js';
export type { Actor, LinkReader, RowWriteLimits, RowWriteScope, RowWriter, SqlCaller, SqlRequest, SqlResult, SqlServiceDeps } from './sql.service.js';
export { sqlRoutes } from './sql.routes.js';
export { SqlError } from './sql-error.js';
export { DEFAULT_LIMIT, MAX_LIMIT } from './limits.js';
export { MAX_SQL_LENGTH } from './parser.js';
export { SqlThreads } from './sql-threads.js';
export { DEFAULT_COST_LIMITS } from './sql.service.js';
export { sqliteFileOf } from './sql.repository.js';
