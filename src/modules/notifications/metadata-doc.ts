/**
 * The parts of a base's metadata document (`base_metadata.data`) that rules refer to. The rows module
 * owns the document; we only read it, so these types are deliberately minimal and tolerant.
 */
export interface MetaColumn {
  key: string;
  name: string;
  type: string;
  data: unknown;
}

/** A column a deadline can be read from: a date column, or a formula / link-formula whose result is a date. */
export function isDateColumn(column: MetaColumn): boolean {
  if (column.type === 'date') return true;
  return (column.type === 'formula' || column.type === 'link-formula') && (column.data as { result_type?: unknown } | null)?.result_type === 'date';
}

export interface MetaView {
  _id: string;
  name: string;
  filters?: unknown;
  filter_conjunction?: unknown;
}

export interface MetaTable {
  _id: string;
  name: string;
  columns: MetaColumn[];
  views: MetaView[];
}

export interface MetaDoc {
  tables: MetaTable[];
}

/** Parse the stored JSON; anything malformed reads as a base without tables. */
export function parseMetaDoc(text: string | null | undefined): MetaDoc {
  if (!text) return { tables: [] };
  try {
    const doc = JSON.parse(text) as { tables?: unknown };
    if (!Array.isArray(doc.tables)) return { tables: [] };
    const tables = doc.tables.filter(isObject).map((t) => ({
      _id: String(t._id ?? ''),
      name: String(t.name ?? ''),
      columns: (Array.isArray(t.columns) ? t.columns : []).filter(isObject).map((c) => ({
        key: String(c.key ?? ''),
        name: String(c.name ?? ''),
        type: String(c.type ?? ''),
        data: c.data ?? null,
      })),
      views: (Array.isArray(t.views) ? t.views : []).filter(isObject).map((v) => ({
        _id: String(v._id ?? ''),
        name: String(v.name ?? ''),
        filters: v.filters,
        filter_conjunction: v.filter_conjunction,
      })),
    }));
    return { tables };
  } catch {
    return { tables: [] };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function tableById(doc: MetaDoc, id: string): MetaTable | undefined {
  return doc.tables.find((t) => t._id === id);
}

export function viewById(table: MetaTable, id: string): MetaView | undefined {
  return table.views.find((v) => v._id === id);
}

export function columnByKey(table: MetaTable, key: string): MetaColumn | undefined {
  return table.columns.find((c) => c.key === key);
}

export function columnByName(table: MetaTable, name: string): MetaColumn | undefined {
  return table.columns.find((c) => c.name === name);
}

/** Column types whose cell (or row field) names users: the possible `users_column_key` targets. */
export const USER_COLUMN_TYPES: readonly string[] = ['collaborator', 'creator', 'last-modifier'];
