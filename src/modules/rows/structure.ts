import { badRequest, notFound } from '../../shared/errors.js';
import { checkColumnName, checkColumnType, FIRST_COLUMN_TYPES, normalizeColumnData } from './column-types.js';
import { checkColumnData } from './column-data-schema.js';
import { newColumn } from './default-metadata.js';
import { newShortId } from './ids.js';
import { lookupColumn, lookupTable, type BaseMetadata, type ColumnMeta, type TableMeta, type ViewMeta } from './metadata.js';
import { compileFilter } from './filter-adapter.js';
import { forgetColumnLayout } from './view-columns.js';

/** Pure edits of the metadata document shared by the table, column and view services. */

export const MAX_TABLE_NAME_LENGTH = 255;

export function checkTableName(value: unknown, field = 'table_name'): string {
  if (typeof value !== 'string') throw badRequest(`${field} invalid.`);
  const name = value.trim();
  if (name === '' || [...name].length > MAX_TABLE_NAME_LENGTH) throw badRequest(`${field} invalid.`);
  return name;
}

export interface ColumnSpec {
  column_name?: unknown;
  column_type?: unknown;
  column_data?: unknown;
}

export function assertFirstColumnType(type: string): void {
  if (!FIRST_COLUMN_TYPES.includes(type)) {
    throw badRequest(`The first column can only be of type ${FIRST_COLUMN_TYPES.join(', ')}.`);
  }
}

export function assertNameFree(table: TableMeta, name: string): void {
  if (table.columns.some((c) => c.name === name)) throw badRequest(`Column ${name} exists.`);
}

/** A new non-link column for `table` (not yet inserted). */
export function buildColumn(table: TableMeta, spec: ColumnSpec, key?: string): ColumnMeta {
  const name = checkColumnName(spec.column_name);
  // The typed clients leave `column_type` out for a text column, as the original allows.
  const type = checkColumnType(spec.column_type === undefined || spec.column_type === null ? 'text' : spec.column_type);
  if (type === 'link') throw badRequest('link columns are added one at a time.');
  assertNameFree(table, name);
  return newColumn(key ?? newShortId(table.columns.map((c) => c.key)), name, type, normalizeColumnData(type, checkColumnData(type, spec.column_data)));
}

/** Insert `column` right after `anchor` (a name or key), or at the end. */
export function placeColumn(table: TableMeta, column: ColumnMeta, anchor?: unknown): void {
  if (typeof anchor === 'string' && anchor !== '') {
    const target = lookupColumn(table, anchor);
    if (!target) throw notFound(`column ${anchor} not found`);
    table.columns.splice(table.columns.indexOf(target) + 1, 0, column);
  } else {
    table.columns.push(column);
  }
}

function freeName(table: TableMeta, wanted: string): string {
  let name = wanted;
  for (let i = 2; table.columns.some((c) => c.name === name); i++) name = `${wanted}-${i}`;
  return name;
}

/**
 * A link column in `table` to the table named by `column_data.other_table` (or `other_table_id`), plus
 * its twin in the other table (named after `table`, as the original does). Both share the link id.
 */
/** `linkId`: a free link id (kept-tables.ts `freeLinkId`: none stored for a trashed table either). */
export function addLinkColumn(meta: BaseMetadata, table: TableMeta, name: string, rawData: unknown, anchor: unknown, linkId: string): ColumnMeta {
  const data = checkColumnData('link', rawData) ?? {};
  const other = lookupTable(meta, { table_name: data.other_table, table_id: data.other_table_id });
  if (!other) throw badRequest('column_data.other_table invalid.');
  const shared = { link_id: linkId, table_id: table._id, other_table_id: other._id, is_internal_link: true, is_multiple: true, is_row_from_view: false, other_view_id: '' };
  const column = newColumn(newShortId(table.columns.map((c) => c.key)), name, 'link', {
    ...shared,
    display_column_key: other.columns[0]?.key ?? '0000',
  });
  placeColumn(table, column, anchor);
  if (other._id !== table._id) {
    const twin = newColumn(newShortId(other.columns.map((c) => c.key)), freeName(other, table.name), 'link', {
      ...shared,
      display_column_key: table.columns[0]?.key ?? '0000',
    });
    other.columns.push(twin);
  }
  return column;
}

export function linkIdOf(column: ColumnMeta): string | null {
  const id = (column.data as { link_id?: unknown } | null)?.link_id;
  return column.type === 'link' && typeof id === 'string' ? id : null;
}

/** Remove every column (in any table) of link `linkId`. */
export function removeLinkColumns(meta: BaseMetadata, linkId: string): void {
  for (const table of meta.tables) {
    for (const column of table.columns.filter((c) => linkIdOf(c) === linkId)) removeColumnFromTable(table, column.key);
  }
}

/** Drop a column and every view reference to it (filters, sorts, groups, hidden columns). */
export function removeColumnFromTable(table: TableMeta, key: string): void {
  const column = table.columns.find((c) => c.key === key);
  table.columns = table.columns.filter((c) => c.key !== key);
  for (const view of table.views) forgetColumn(view, key, column?.name);
}

/**
 * After a column changed type, drop the view filters on it that the new type cannot evaluate, so
 * listing those views keeps working (the other filters, sorts and hidden columns stay).
 */
export function dropFiltersUnfitForType(table: TableMeta, column: ColumnMeta): void {
  for (const view of table.views) {
    try {
      compileFilter(table, view);
    } catch {
      view.filters = pruneFilters(view.filters, column.key, column.name);
    }
  }
}

function forgetColumn(view: ViewMeta, key: string, name: string | undefined): void {
  view.sorts = view.sorts.filter((s) => s.column_key !== key);
  view.groupbys = view.groupbys.filter((g) => (g as { column_key?: unknown } | null)?.column_key !== key);
  view.hidden_columns = view.hidden_columns.filter((k) => k !== key);
  view.filters = pruneFilters(view.filters, key, name);
  // The console's layout (kanban, calendar) built on the column falls back to its first choice.
  const layout = view.layout as { type: string; column_key?: string } | undefined;
  if (layout?.column_key === key) view.layout = { type: layout.type };
  forgetColumnLayout(view, key);
}

function pruneFilters(filters: unknown[], key: string, name: string | undefined): unknown[] {
  const kept: unknown[] = [];
  for (const item of filters) {
    if (typeof item !== 'object' || item === null) continue;
    const f = item as Record<string, unknown>;
    if (Array.isArray(f.filters)) {
      const inner = pruneFilters(f.filters, key, name);
      if (inner.length > 0) kept.push({ ...f, filters: inner });
    } else if (f.column_key !== key && (name === undefined || f.column_name !== name || f.column_key !== undefined)) {
      kept.push(f);
    }
  }
  return kept;
}

/** Rewrite filter items naming a column by `column_name` to `column_key`, so renames keep views working. */
export function filtersByKey(filters: unknown[], table: TableMeta): unknown[] {
  return filters.map((item) => {
    if (typeof item !== 'object' || item === null) return item;
    const f = item as Record<string, unknown>;
    if (Array.isArray(f.filters)) return { ...f, filters: filtersByKey(f.filters, table) };
    if (f.column_key === undefined && typeof f.column_name === 'string') {
      const column = lookupColumn(table, f.column_name);
      if (column) {
        const { column_name: _name, ...rest } = f;
        return { ...rest, column_key: column.key };
      }
    }
    return f;
  });
}
