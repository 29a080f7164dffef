/**
 * The filter engine (contract §8.6): one parse, then the same answer in memory (`matchesRow`) and in
 * SQL (`filterToSql`) on SQLite and PostgreSQL. Used by row listing, views, notification rules and
 * deadline scans. Semantics and their sources are described in README.md next to this file.
 */
export { parseFilters, usedColumnKeys, usesCurrentUser, MAX_DEPTH, MAX_ITEMS } from './parse.js';
export { matchesRow } from './evaluate.js';
export { filterToSql, indexableTerms, rawInJson, searchTerms, SEARCH_MIN_TERM } from './to-sql.js';
export { isValidTimeZone } from './dates.js';
export type { CompiledFilter, FilterColumn, FilterContext, FilterSpec, ParseResult, StoredRow } from './types.js';
export { dayUpperBound, indexableKey, indexedValue, postgresJson, postgresNumber, postgresText, postgresTextC, sqliteType, sqliteValue } from './cell-sql.js';
export type { Condition, ParsedCondition } from './types.js';
