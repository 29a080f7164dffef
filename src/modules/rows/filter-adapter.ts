import type { Expression, SqlBool } from 'kysely';
import type { DialectName } from '../../db/index.js';
import { apiError } from '../../shared/errors.js';
import { filterToSql, parseFilters, type CompiledFilter, type FilterContext } from '../filters/index.js';
import type { TableMeta } from './metadata.js';

/** Compile filters against a table's columns; 404 for an unknown column (as the original), else 400. */
export function compileFilter(table: TableMeta, spec: { filters?: unknown; filter_conjunction?: unknown }): CompiledFilter {
  const filters = spec.filters === undefined || spec.filters === null ? [] : spec.filters;
  if (!Array.isArray(filters)) throw apiError(400, 'filters invalid');
  const result = parseFilters({ filters, filter_conjunction: spec.filter_conjunction }, table.columns);
  if (!result.ok) throw apiError(/^column .* not found$/.test(result.error) ? 404 : 400, result.error);
  return result.filter;
}

export function filterWhere(filter: CompiledFilter, ctx: FilterContext, dialect: DialectName): Expression<SqlBool> | undefined {
  return filter.root === null ? undefined : filterToSql(filter, ctx, dialect);
}
