import { apiError } from '../../shared/errors.js';
import type { BaseMetadata, TableMeta, ViewMeta } from './metadata.js';
import { VIEW_REFUSALS } from './view-limit.js';
import { forgetColumnLayout } from './view-columns.js';

/** The view a view share's Base-Token is limited to (its scope's ids). */
export interface SharedViewRef {
  table: string;
  view: string;
}

/**
 * The metadata a view share's token reads (`metadata/`, `columns/`, `views/`): its table only, with the
 * columns its view shows and that one view only. The view's own settings that name a hidden column
 * (a filter, a sort, a grouping) are left out, so nothing of a hidden column shows; `hidden_columns`
 * is empty (the hidden columns are not there). Pure: the stored metadata is not changed.
 */
export function metadataOfView(meta: BaseMetadata, shared: SharedViewRef): BaseMetadata {
  const table = meta.tables.find((t) => t._id === shared.table);
  const view = table?.views.find((v) => v._id === shared.view);
  if (!table || !view) throw apiError(403, VIEW_REFUSALS.gone);
  const hidden = new Set(view.hidden_columns);
  const hiddenNames = new Set(table.columns.filter((c) => hidden.has(c.key)).map((c) => c.name));
  const namesHidden = (item: unknown) => mentionsColumn(item, hidden, hiddenNames);
  const limitedView: ViewMeta = {
    ...view,
    filters: view.filters.filter((f) => !namesHidden(f)),
    sorts: view.sorts.filter((s) => !namesHidden(s)),
    groupbys: view.groupbys.filter((g) => !namesHidden(g)),
    hidden_columns: [],
  };
  for (const key of hidden) forgetColumnLayout(limitedView, key);
  const limitedTable: TableMeta = { ...table, columns: table.columns.filter((c) => !hidden.has(c.key)), views: [limitedView] };
  return { ...meta, tables: [limitedTable] };
}

/** Whether a filter, sort or grouping (nested groups included) names one of the columns by key or name. */
export function mentionsColumn(item: unknown, keys: ReadonlySet<string>, names: ReadonlySet<string>): boolean {
  if (keys.size === 0) return false;
  if (Array.isArray(item)) return item.some((i) => mentionsColumn(i, keys, names));
  if (typeof item !== 'object' || item === null) return false;
  for (const [field, value] of Object.entries(item)) {
    if (field === 'column_key' && typeof value === 'string' && keys.has(value)) return true;
    if (field === 'column_name' && typeof value === 'string' && names.has(value)) return true;
    if (typeof value === 'object' && mentionsColumn(value, keys, names)) return true;
  }
  return false;
}
