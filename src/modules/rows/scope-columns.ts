import { apiError } from '../../shared/errors.js';
import { columnsBeyondScope, tableRefusal, type ScopeColumn, type ScopeTable, type TokenScope } from '../access/index.js';
import { readSpec } from '../formulas/index.js';
import type { ColumnMeta } from './metadata.js';

const NONE: ReadonlyMap<string, string> = new Map();

/** What the scope judgement needs of a table: its id, and its columns' keys, types and data. */
export interface ScopedTable {
  _id: string;
  columns: ReadonlyArray<{ key: string; type: string; data?: Record<string, unknown> | null }>;
}

/**
 * The columns of `table` a table-scoped token may not read (key → the id of the table outside its scope
 * they show), as the access policy decides (`columnsBeyondScope`): link columns to tables outside the
 * scope and the link formulas over them. `tables`: the base's tables (ids and names). Empty for every
 * other caller. The rows' readers and SQL (`sql.service.ts`) ask this.
 */
export function columnsBeyond(scopeTables: readonly string[] | undefined, tables: readonly ScopeTable[], table: ScopedTable): ReadonlyMap<string, string> {
  if (!scopeTables) return NONE;
  const scope: TokenScope = { tables: [...scopeTables] };
  const columns: ScopeColumn[] = table.columns.map((c) => {
    if (c.type === 'link') {
      // Both ends' link columns carry {table_id, other_table_id}; the other end is the one that is not this table.
      const data = (c.data ?? {}) as { table_id?: unknown; other_table_id?: unknown };
      const other = String(data.table_id === table._id ? data.other_table_id : data.table_id);
      const name = tables.find((t) => t._id === other)?.name;
      return { key: c.key, reaches: name === undefined ? { _id: other } : { _id: other, name } };
    }
    if (c.type === 'formula') {
      const reads = (c.data as { operated_columns?: unknown } | null | undefined)?.operated_columns;
      return Array.isArray(reads) ? { key: c.key, reads: reads.filter((k): k is string => typeof k === 'string') } : { key: c.key };
    }
    const spec = c.type === 'link-formula' ? readSpec(c.data ?? null) : null;
    return spec ? { key: c.key, through: spec.linkColumnKey } : { key: c.key };
  });
  return columnsBeyondScope(scope, columns);
}

/** `columns` without those beyond the scope (the same array when none is). */
export function withinScope(columns: ColumnMeta[], beyond: ReadonlyMap<string, string>): ColumnMeta[] {
  return beyond.size === 0 ? columns : columns.filter((c) => !beyond.has(c.key));
}

/** A request naming a column beyond the scope (a filter, a sort, `query-links/`) is refused, naming the table it shows. */
export function refuseBeyondScope(beyond: ReadonlyMap<string, string>, keys: Iterable<string>): void {
  if (beyond.size === 0) return;
  for (const key of keys) {
    const table = beyond.get(key);
    if (table !== undefined) throw apiError(403, tableRefusal(table));
  }
}
