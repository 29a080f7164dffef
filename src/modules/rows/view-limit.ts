import { sql, type Expression, type SqlBool } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import { apiError } from '../../shared/errors.js';
import type { FilterContext } from '../filters/index.js';
import { notArchived } from './archived-rows.js';
import { compileFilter, filterWhere } from './filter-adapter.js';
import { findTable, type BaseMetadata, type TableMeta, type ViewMeta } from './metadata.js';
import { RowInput } from './row-input.js';
import { tableScope } from './rows.repository.js';

/**
 * A view share's limit on row writes (a view-limited Base-Token, `access/scope.ts`): the view's table,
 * the columns the view shows, and — for changes and deletions — the rows it shows. Judged inside the
 * write's transaction, so the rows are the view's rows at the moment of the write.
 */
export interface ViewLimit {
  /** Table and view ids (the token's scope). */
  table: string;
  view: string;
  /** Who writes, for the view's filters that name the current user. */
  viewer: { currentUser?: string };
}

/** How many row ids one membership query names (well under both databases' parameter limits). */
const CHUNK = 500;

/** What a view-limited token is told when it names a table other than the view's, or a column the view hides (rows API and SQL alike). */
export const VIEW_REFUSALS = {
  table: (name: string) => `The token is limited to one view: the table ${name} is not its table.`,
  column: (name: string) => `The token is limited to one view: the column ${name} is hidden in it.`,
  gone: 'The token is limited to one view, which no longer exists.',
};

/** The view-limited token's table and view, or a 403 naming what is refused. */
export function limitedView(meta: BaseMetadata, body: Record<string, unknown>, limit: ViewLimit): { table: TableMeta; view: ViewMeta } {
  const table = findTable(meta, body);
  if (table._id !== limit.table) throw apiError(403, VIEW_REFUSALS.table(table.name));
  const view = table.views.find((v) => v._id === limit.view);
  if (!view) throw apiError(403, VIEW_REFUSALS.gone);
  return { table, view };
}

/** 403 when a written row names a column the view hides (unknown keys are ignored, as for every write). */
export function refuseHiddenColumns(table: TableMeta, view: ViewMeta, rows: readonly Record<string, unknown>[]): void {
  if (view.hidden_columns.length === 0) return;
  const hidden = new Set(view.hidden_columns);
  const input = new RowInput(table);
  for (const row of rows) {
    for (const name of Object.keys(row)) {
      const column = input.column(name);
      if (column && hidden.has(column.key)) {
        throw apiError(403, VIEW_REFUSALS.column(column.name));
      }
    }
  }
}

/**
 * The rows a view shows, as a condition on `base_rows`: its table, not archived, its filters (with `ctx`'s
 * current user and today). The one definition of "the view's rows" for row writes and SQL (sql/view-source.ts).
 */
export function viewRowsWhere(dialect: DialectName, baseId: number, table: TableMeta, view: ViewMeta, ctx: FilterContext): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [tableScope(baseId, table._id), notArchived(dialect)];
  if (view.filters.length > 0) {
    const filter = filterWhere(compileFilter(table, view), ctx, dialect);
    if (filter) conditions.push(filter);
  }
  return sql<SqlBool>`(${sql.join(conditions, sql` and `)})`;
}

/** 403 naming the first of `rowIds` the view does not show (its filters, archived rows left out) — unknown ids included. */
export async function refuseRowsOutsideView(
  trx: Executor,
  dialect: DialectName,
  baseId: number,
  table: TableMeta,
  view: ViewMeta,
  ctx: FilterContext,
  rowIds: readonly string[],
): Promise<void> {
  const inView = viewRowsWhere(dialect, baseId, table, view, ctx);
  const wanted = [...new Set(rowIds)];
  for (let i = 0; i < wanted.length; i += CHUNK) {
    const part = wanted.slice(i, i + CHUNK);
    const shown = await trx
      .selectFrom('base_rows')
      .select('row_id')
      .where(inView)
      .where('row_id', 'in', part)
      .execute();
    const shownIds = new Set(shown.map((r) => r.row_id));
    const outside = part.find((id) => !shownIds.has(id));
    if (outside !== undefined) throw apiError(403, `The token is limited to one view: the row ${outside} is not in it.`);
  }
}
