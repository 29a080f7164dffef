import { badRequest } from '../../shared/errors.js';
import type { ArchivedLink, ArchivedRow } from './archive.repository.js';

/**
 * The original's `.dtable` `content.json` (dtable-server's document, as dtable-store holds it):
 * `{version, format_version, settings, tables: [{_id, name, columns, views, rows: [{_id, _ctime, …,
 * <column key>: cell}]}], links: [{_id, table1_id, table2_id, table1_table2_map: {row: [rows]}}]}`.
 * Its tables, columns and views are the metadata document basegate stores (same keys); rows and links
 * become stored rows and links. Link cells live in `links` (not in the rows), as here.
 */
export interface OriginalContent {
  name: string;
  metadata: Record<string, unknown>;
  rows: ArchivedRow[];
  links: ArchivedLink[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown, fallback = '') => (typeof v === 'string' ? v : fallback);

/** Whether a parsed `content.json` is the original's document (tables with their rows, no basegate marker). */
export function isOriginalContent(content: unknown): content is Obj {
  return isObj(content) && content.format === undefined && Array.isArray(content.tables);
}

/** The original's document as a base's metadata, rows and links; `name` from the file. */
export function fromOriginalContent(content: Obj, name: string): OriginalContent {
  const tables = content.tables as unknown[];
  const rows: ArchivedRow[] = [];
  const metaTables = tables.map((t, i) => {
    if (!isObj(t) || typeof t._id !== 'string' || typeof t.name !== 'string' || !Array.isArray(t.columns)) throw badRequest(`content.json: table ${i + 1} is not valid.`);
    const columns = t.columns.map((c, j) => {
      if (!isObj(c) || typeof c.key !== 'string' || typeof c.name !== 'string' || typeof c.type !== 'string') throw badRequest(`content.json: table ${t.name}, column ${j + 1} is not valid.`);
      return { width: 200, editable: true, resizable: true, draggable: true, data: null, ...c, key: c.key, type: c.type };
    });
    const linkKeys = new Set(columns.filter((c) => c.type === 'link').map((c) => c.key));
    for (const r of Array.isArray(t.rows) ? t.rows : []) {
      if (!isObj(r) || typeof r._id !== 'string') throw badRequest(`content.json: table ${t.name} has a row that is not valid.`);
      const data: Obj = {};
      for (const [key, value] of Object.entries(r)) if (!key.startsWith('_') && !linkKeys.has(key) && value !== null) data[key] = value;
      const ctime = Date.parse(text(r._ctime)) || 0;
      rows.push({
        table_id: t._id,
        row_id: r._id,
        data: JSON.stringify(data),
        ctime,
        mtime: Date.parse(text(r._mtime)) || ctime,
        creator: text(r._creator),
        last_modifier: text(r._last_modifier, text(r._creator)),
      });
    }
    const { rows: _rows, ...rest } = t;
    return { is_header_locked: false, header_settings: {}, summary_configs: {}, views: [], ...rest, columns };
  });
  const links: ArchivedLink[] = [];
  for (const l of Array.isArray(content.links) ? content.links : []) {
    if (!isObj(l) || typeof l._id !== 'string' || !isObj(l.table1_table2_map)) throw badRequest('content.json: a link is not valid.');
    for (const [rowId, others] of Object.entries(l.table1_table2_map)) {
      if (!Array.isArray(others)) throw badRequest('content.json: a link is not valid.');
      for (const other of others) if (typeof other === 'string') links.push({ link_id: l._id, row_id: rowId, other_row_id: other, ctime: 0 });
    }
  }
  const metadata = {
    version: typeof content.version === 'number' ? content.version : 1,
    format_version: typeof content.format_version === 'number' ? content.format_version : 9,
    settings: isObj(content.settings) ? content.settings : {},
    tables: metaTables,
  };
  return { name, metadata, rows, links };
}
