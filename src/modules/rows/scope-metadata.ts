import { tableInScope, type TokenScope } from '../access/index.js';
import type { BaseMetadata, TableMeta, ViewMeta } from './metadata.js';
import { columnsBeyond } from './scope-columns.js';
import { forgetColumnLayout } from './view-columns.js';
import { mentionsColumn, metadataOfView } from './view-metadata.js';

/**
 * The metadata a scoped token reads (`metadata/`, `columns/`, `views/`): a view share's, its one view
 * (view-metadata.ts); a table-scoped token's, its tables only, each without the columns beyond its scope
 * (link columns to a table outside it and what is computed through them: scope-columns.ts), and their
 * views without the filters, sorts and groupings that name one (their `hidden_columns` and layout
 * without them), so neither the other table's id nor anything of its cells shows. Pure: the stored
 * metadata is not changed. Everyone else: `meta` itself.
 */
export function metadataForScope(meta: BaseMetadata, scope: TokenScope | null | undefined): BaseMetadata {
  if (scope?.view) return metadataOfView(meta, scope.view);
  const scopeTables = scope?.tables;
  if (!scopeTables) return meta;
  const tables = meta.tables.filter((t) => tableInScope(scope, t)).map((table) => tableWithinScope(table, columnsBeyond(scopeTables, meta.tables, table)));
  return { ...meta, tables };
}

function tableWithinScope(table: TableMeta, beyond: ReadonlyMap<string, string>): TableMeta {
  if (beyond.size === 0) return table;
  const keys = new Set(beyond.keys());
  const names = new Set(table.columns.filter((c) => keys.has(c.key)).map((c) => c.name));
  const views = table.views.map((view): ViewMeta => {
    const limited: ViewMeta = {
      ...view,
      filters: view.filters.filter((f) => !mentionsColumn(f, keys, names)),
      sorts: view.sorts.filter((s) => !mentionsColumn(s, keys, names)),
      groupbys: view.groupbys.filter((g) => !mentionsColumn(g, keys, names)),
      hidden_columns: view.hidden_columns.filter((k) => !keys.has(k)),
    };
    for (const key of keys) forgetColumnLayout(limited, key);
    return limited;
  });
  return { ...table, columns: table.columns.filter((c) => !keys.has(c.key)), views };
}
