import { matchesRow, parseFilters, type FilterColumn, type FilterContext, type StoredRow } from '../filters/index.js';

/** One view a user sees through a view share (table and view ids). */
export interface SharedView {
  table: string;
  view: string;
}

/** The parts of a table of the base's metadata the check reads. */
export interface VisibilityTable {
  _id: string;
  columns: readonly FilterColumn[];
  views: ReadonlyArray<{ _id: string; filters?: unknown; filter_conjunction?: unknown }>;
}

/**
 * Whether a user sees `row` of `table`: `views` undefined means access to the whole base (owner,
 * shares, groups: every row); otherwise the user has only view shares, and sees the row when one of
 * those views of this table shows it — its filters judged by the filters engine, with `ctx.currentUser`
 * the user. A view deleted or whose filters no longer parse shows nothing. Pure.
 */
export function seesRow(views: readonly SharedView[] | undefined, table: VisibilityTable, row: StoredRow, ctx: FilterContext): boolean {
  if (views === undefined) return true;
  for (const shared of views) {
    if (shared.table !== table._id) continue;
    const view = table.views.find((v) => v._id === shared.view);
    if (!view) continue;
    const filters = Array.isArray(view.filters) ? view.filters : [];
    if (filters.length === 0) return true;
    const parsed = parseFilters({ filters, filter_conjunction: view.filter_conjunction }, [...table.columns]);
    if (parsed.ok && matchesRow(parsed.filter, row, ctx)) return true;
  }
  return false;
}
