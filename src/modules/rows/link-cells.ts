import { sql } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import type { LinkSide } from './links.repository.js';
import type { BaseMetadata, ColumnMeta, TableMeta } from './metadata.js';
import { displayText, type LinkCell, type LinkCells, type StoredRow } from './present.js';

/** Link cells in list/get responses show at most this many linked rows (the original's 5.3 rule). */
export const LINK_CELL_LIMIT = 50;

export interface LinkColumnData {
  link_id: string;
  table_id: string;
  other_table_id: string;
  display_column_key?: string;
}

export interface LinkEnds {
  linkId: string;
  /** Which end of `base_links` this table's rows are stored on. */
  side: LinkSide;
  otherTableId: string;
}

/** Both tables' link columns share `{link_id, table_id, other_table_id}`; the side follows from the table. */
export function linkEnds(table: TableMeta, column: ColumnMeta): LinkEnds {
  const data = column.data as unknown as LinkColumnData;
  if (data.table_id === table._id) return { linkId: data.link_id, side: 'row_id', otherTableId: data.other_table_id };
  return { linkId: data.link_id, side: 'other_row_id', otherTableId: data.table_id };
}

/** The column a linked row is shown by: the link's display column if it still exists, else the first column. */
export function displayColumn(otherTable: TableMeta | undefined, column: ColumnMeta): ColumnMeta | undefined {
  if (!otherTable) return undefined;
  const key = (column.data as { display_column_key?: unknown } | null)?.display_column_key;
  return otherTable.columns.find((c) => c.key === key) ?? otherTable.columns[0];
}

/** `{row_id, display_value}` lists for `rowIds`, one map per link column among `columns`. */
export async function loadLinkCells(
  db: Executor,
  baseId: number,
  meta: BaseMetadata,
  table: TableMeta,
  columns: ColumnMeta[],
  rowIds: string[],
  limit = LINK_CELL_LIMIT,
  dialect: DialectName = 'sqlite',
): Promise<LinkCells> {
  const cells: LinkCells = new Map();
  if (rowIds.length === 0) return cells;
  for (const column of columns) {
    if (column.type !== 'link') continue;
    const ends = linkEnds(table, column);
    const display = displayColumn(meta.tables.find((t) => t._id === ends.otherTableId), column);
    cells.set(column.key, await linkedDisplays(db, dialect, baseId, ends, display, [...new Set(rowIds)], limit));
  }
  return cells;
}

const CHUNK = 500;

interface LinkedRecord {
  from_id: string;
  other_id: string;
  ctime: unknown;
  mtime: unknown;
  creator: unknown;
  last_modifier: unknown;
  cell: unknown;
}

/**
 * One query per link column and page: the linked rows (in link order, existing ones only) with just the
 * display column's cell and the row fields, instead of the linked rows' whole cells.
 */
async function linkedDisplays(
  db: Executor,
  dialect: DialectName,
  baseId: number,
  ends: LinkEnds,
  display: ColumnMeta | undefined,
  rowIds: string[],
  limit: number,
): Promise<Map<string, LinkCell[]>> {
  const out = new Map<string, LinkCell[]>();
  const [from, other] = ends.side === 'row_id' ? (['row_id', 'other_row_id'] as const) : (['other_row_id', 'row_id'] as const);
  const key = display?.key ?? '';
  // SQLite `->` answers the cell as JSON text (strings quoted), PostgreSQL `->` as jsonb (parsed by the driver).
  const cell = dialect === 'postgres' ? sql`o.data -> cast(${key} as text)` : sql`o.data -> ${`$."${key.replace(/"/g, '')}"`}`;
  for (let i = 0; i < rowIds.length; i += CHUNK) {
    const part = rowIds.slice(i, i + CHUNK);
    const { rows } = await sql<LinkedRecord>`
      select l.${sql.ref(from)} as from_id, l.${sql.ref(other)} as other_id, o.ctime, o.mtime, o.creator, o.last_modifier, ${cell} as cell
      from base_links l
      join base_rows o on o.base_id = l.base_id and o.table_id = ${ends.otherTableId} and o.row_id = l.${sql.ref(other)}
      where l.base_id = ${baseId} and l.link_id = ${ends.linkId} and l.${sql.ref(from)} in (${sql.join(part)})
      order by l.id`.execute(db);
    for (const r of rows) {
      const list = out.get(r.from_id) ?? [];
      if (list.length >= limit) continue;
      const value = typeof r.cell === 'string' && dialect !== 'postgres' ? JSON.parse(r.cell) : r.cell;
      const row: StoredRow = {
        _id: r.other_id,
        _ctime: Number(r.ctime),
        _mtime: Number(r.mtime),
        _creator: String(r.creator ?? ''),
        _last_modifier: String(r.last_modifier ?? ''),
        data: value === null || value === undefined ? {} : { [key]: value },
      };
      list.push({ row_id: r.other_id, display_value: displayText(display, row) });
      out.set(r.from_id, list);
    }
  }
  return out;
}

/**
 * The link cells of a page as JSON text, one map (row id → `[{"row_id", "display_value"}, …]`) per link
 * column of `linkKeys`, in that order; rows without links are not in the map (their cell is `[]`).
 * One query per link column answering the whole page as one JSON array (SQLite `json_group_array`,
 * PostgreSQL `json_agg`), with only what the display value needs of each linked row; the links are put
 * in their order (`base_links.id`) here, which is cheaper than the database's sort.
 */
export async function loadLinkJson(
  db: Executor,
  dialect: DialectName,
  baseId: number,
  meta: BaseMetadata,
  table: TableMeta,
  linkKeys: string[],
  rowIds: string[],
  limit = LINK_CELL_LIMIT,
): Promise<Array<Map<string, string>>> {
  const out: Array<Map<string, string>> = [];
  for (const key of linkKeys) {
    const column = table.columns.find((c) => c.key === key)!;
    const ends = linkEnds(table, column);
    const display = displayColumn(meta.tables.find((t) => t._id === ends.otherTableId), column);
    out.push(rowIds.length === 0 ? new Map() : await linkedJson(db, dialect, baseId, ends, display, rowIds, limit));
  }
  return out;
}

/** Row fields a display column may show instead of a cell. */
const DISPLAY_FIELD: Readonly<Record<string, string>> = { ctime: 'ctime', mtime: 'mtime', creator: 'creator', 'last-modifier': 'last_modifier' };

async function linkedJson(
  db: Executor,
  dialect: DialectName,
  baseId: number,
  ends: LinkEnds,
  display: ColumnMeta | undefined,
  rowIds: string[],
  limit: number,
): Promise<Map<string, string>> {
  const [from, other] = ends.side === 'row_id' ? (['row_id', 'other_row_id'] as const) : (['other_row_id', 'row_id'] as const);
  const field = display ? DISPLAY_FIELD[display.type] : undefined;
  const key = display?.key ?? '';
  const shown = field
    ? sql`o.${sql.ref(field)}`
    : display === undefined || display.type === 'button'
      ? sql`null`
      : dialect === 'postgres'
        ? sql`o.data -> cast(${key} as text)`
        : sql`o.data -> ${`$."${key.replace(/"/g, '')}"`}`;
  const join = sql`from base_links l join base_rows o on o.base_id = l.base_id and o.table_id = ${ends.otherTableId} and o.row_id = l.${sql.ref(other)}`;
  const ids = [...new Set(rowIds)];
  const { rows } =
    dialect === 'postgres'
      ? await sql<{ links: unknown }>`
          select json_agg(json_build_array(l.${sql.ref(from)}, l.${sql.ref(other)}, ${shown}, l.id))::text as links ${join}
          where l.base_id = ${baseId} and l.link_id = ${ends.linkId} and l.${sql.ref(from)} = any(cast(${ids} as text[]))`.execute(db)
      : await sql<{ links: unknown }>`
          select json_group_array(json_array(l.${sql.ref(from)}, l.${sql.ref(other)}, ${shown}, l.id)) as links ${join}
          where l.base_id = ${baseId} and l.link_id = ${ends.linkId} and l.${sql.ref(from)} in (select value from json_each(${JSON.stringify(ids)}))`.execute(db);
  const text = rows[0]?.links;
  const out = new Map<string, string>();
  if (typeof text !== 'string') return out;
  // Unordered from the database (sorting there cost more): in link order (`id`) per row here.
  type Linked = [fromId: string, otherId: string, value: unknown, id: number];
  const lists = new Map<string, Linked[]>();
  for (const link of JSON.parse(text) as Linked[]) {
    const list = lists.get(link[0]);
    if (list) list.push(link);
    else lists.set(link[0], [link]);
  }
  for (const [fromId, list] of lists) {
    if (list.length > 1) list.sort((a, b) => a[3] - b[3]);
    let json = '[';
    for (let i = 0; i < list.length && i < limit; i++) {
      const [, otherId, value] = list[i]!;
      json += `${i === 0 ? '' : ','}{"row_id":${JSON.stringify(otherId)},"display_value":${JSON.stringify(displayText(display, shownRow(otherId, field, key, value)))}}`;
    }
    out.set(fromId, `${json}]`);
  }
  return out;
}

/** The linked row as far as its display value needs it (the shown row field or cell). */
function shownRow(id: string, field: string | undefined, key: string, value: unknown): StoredRow {
  return {
    _id: id,
    _ctime: field === 'ctime' ? Number(value) : 0,
    _mtime: field === 'mtime' ? Number(value) : 0,
    _creator: field === 'creator' ? String(value ?? '') : '',
    _last_modifier: field === 'last_modifier' ? String(value ?? '') : '',
    data: field || value === null || value === undefined ? {} : { [key]: value },
  };
}
