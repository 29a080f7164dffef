import type { TokenScope } from '../access/index.js';
import { badRequest } from '../../shared/errors.js';
import type { Actor, BaseRef, BaseWriter, WriteScope } from './base-writer.js';
import { coerceCell } from './cell-coercion.js';
import { checkColumnName, checkColumnType, COMPUTED_TYPES, NOT_BATCH_APPENDABLE, normalizeColumnData } from './column-types.js';
import { checkColumnData } from './column-data-schema.js';
import { affectsFormulas, configureFormulaColumn, recomputeTable, renameInFormulas } from './formula-columns.js';
import { configureLinkFormulaColumn, recomputeAllLinkFormulas, recomputeLinkFormulasReading } from './link-formula-columns.js';
import { freeLinkId } from './kept-tables.js';
import { removeLinkColumn } from './links.repository.js';
import { findColumn, findTable, lookupColumn, optionalView, visibleColumns, type ColumnMeta, type TableMeta } from './metadata.js';
import { nextAutoNumber } from './row-input.js';
import { dropCells, scanTable, updateRows } from './rows.repository.js';
import { presentColumn } from './structure.present.js';
import { metadataForScope } from './scope-metadata.js';
import { addLinkColumn, assertFirstColumnType, assertNameFree, buildColumn, linkIdOf, dropFiltersUnfitForType, placeColumn, removeColumnFromTable, removeLinkColumns } from './structure.js';

type Body = Record<string, unknown>;

const MAX_BATCH_COLUMNS = 500;

/** Columns: list, insert (incl. link columns), batch append, the PUT op_types, delete. */
export class ColumnsService {
  constructor(private readonly writer: BaseWriter) {}

  /** `scope`: a view share's token lists the columns its view shows, whatever view it names; a table-scoped token, none beyond its scope (scope-metadata.ts). */
  async list(base: BaseRef, query: Body, scope?: TokenScope | null) {
    const meta = metadataForScope(await this.writer.read(base), scope);
    const table = findTable(meta, query);
    return { columns: visibleColumns(table, optionalView(table, query)).map(presentColumn) };
  }

  insert(base: BaseRef, actor: Actor, body: Body) {
    return this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      let column: ColumnMeta;
      if (body.column_type === 'link') {
        const name = checkColumnName(body.column_name);
        assertNameFree(table, name);
        column = addLinkColumn(w.meta, table, name, parseData(body.column_data), body.anchor_column, await freeLinkId(w));
      } else {
        column = buildColumn(table, body);
        placeColumn(table, column, body.anchor_column);
        if (column.type === 'auto-number') await numberExistingRows(w, table, column);
        if (column.type === 'formula') {
          configureFormulaColumn(table, column);
          await recomputeTable(w, this.writer.timeZone, table);
        }
        if (column.type === 'link-formula') {
          configureLinkFormulaColumn(w, table, column);
          await recomputeAllLinkFormulas(w, this.writer.timeZone, table);
        }
      }
      w.metadataChanged();
      return presentColumn(column);
    });
  }

  batchAppend(base: BaseRef, actor: Actor, body: Body) {
    const specs = body.columns;
    if (!Array.isArray(specs) || specs.length === 0 || !specs.every((s) => typeof s === 'object' && s !== null && !Array.isArray(s))) {
      throw badRequest('columns invalid.');
    }
    if (specs.length > MAX_BATCH_COLUMNS) throw badRequest(`Number of columns to append exceeds ${MAX_BATCH_COLUMNS}.`);
    return this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      const added = (specs as Body[]).map((spec) => {
        if (NOT_BATCH_APPENDABLE.includes(String(spec.column_type))) throw badRequest(`column type ${String(spec.column_type)} cannot be batch appended.`);
        const column = buildColumn(table, spec);
        table.columns.push(column);
        return column;
      });
      w.metadataChanged();
      return { columns: added.map(presentColumn) };
    });
  }

  update(base: BaseRef, actor: Actor, body: Body) {
    return this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      const column = findColumn(table, body.column);
      switch (body.op_type) {
        case 'rename_column': {
          const name = checkColumnName(body.new_column_name, 'new_column_name');
          if (name !== column.name) assertNameFree(table, name);
          renameInFormulas(table, column.name, name);
          column.name = name;
          break;
        }
        case 'resize_column': {
          const width = Number(body.new_column_width);
          if (!Number.isInteger(width) || width < 20 || width > 2000) throw badRequest('new_column_width invalid.');
          column.width = width;
          break;
        }
        case 'freeze_column': {
          const frozen = body.frozen === true || body.frozen === 'true' ? true : body.frozen === false || body.frozen === 'false' ? false : null;
          if (frozen === null) throw badRequest('frozen invalid.');
          column.frozen = frozen;
          break;
        }
        case 'move_column':
          moveColumn(table, column, body.target_column);
          break;
        case 'modify_column_type':
          await changeType(w, table, column, body.new_column_type, body.column_data);
          dropFiltersUnfitForType(table, column);
          if (column.type === 'formula') configureFormulaColumn(table, column);
          if (column.type === 'link-formula') {
            configureLinkFormulaColumn(w, table, column);
            await recomputeAllLinkFormulas(w, this.writer.timeZone, table);
          }
          if (affectsFormulas(table, column)) await recomputeTable(w, this.writer.timeZone, table);
          await recomputeLinkFormulasReading(w, this.writer.timeZone, table);
          break;
        default:
          throw badRequest('op_type invalid.');
      }
      w.metadataChanged();
      return presentColumn(column);
    });
  }

  async remove(base: BaseRef, actor: Actor, body: Body) {
    await this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      await removeColumnIn(w, this.writer.timeZone, table, findColumn(table, body.column));
    });
    return { success: true as const };
  }
}

/** A column's delete inside a write: its cells (or links) go, formulas reading it are recomputed. */
export async function removeColumnIn(w: WriteScope, timeZone: string, table: TableMeta, column: ColumnMeta): Promise<void> {
  if (table.columns[0] === column) throw badRequest('The first column cannot be deleted.');
  const linkId = linkIdOf(column);
  if (linkId) {
    removeLinkColumns(w.meta, linkId);
    await removeLinkColumn(w.trx, w.base.id, linkId);
    // Link formulas over the deleted link compute nothing now.
    for (const t of w.meta.tables) if (t.columns.some((c) => c.type === 'link-formula')) await recomputeAllLinkFormulas(w, timeZone, t);
  } else {
    const readByFormulas = affectsFormulas(table, column.key);
    removeColumnFromTable(table, column.key);
    await dropCells(w.trx, w.dialect, w.base.id, table._id, column.key);
    if (readByFormulas) await recomputeTable(w, timeZone, table);
    await recomputeLinkFormulasReading(w, timeZone, table);
  }
  w.metadataChanged();
}

function parseData(raw: unknown): unknown {
  if (typeof raw !== 'string') return raw;
  try {
    return JSON.parse(raw);
  } catch {
    throw badRequest('column_data invalid.');
  }
}

/** Place `column` right after `target`; the first column stays first. */
function moveColumn(table: TableMeta, column: ColumnMeta, targetRef: unknown): void {
  if (typeof targetRef !== 'string' || targetRef === '') throw badRequest('target_column invalid.');
  const target = lookupColumn(table, targetRef);
  if (!target) throw badRequest('target_column invalid.');
  if (table.columns[0] === column) throw badRequest('The first column cannot be moved.');
  if (target === column) return;
  table.columns.splice(table.columns.indexOf(column), 1);
  table.columns.splice(table.columns.indexOf(target) + 1, 0, column);
}

/** Number the rows without a value, in insertion order, when a column becomes auto-number. */
async function numberExistingRows(w: WriteScope, table: TableMeta, column: ColumnMeta): Promise<void> {
  for await (const batch of scanTable(w.trx, w.base.id, table._id)) {
    const rows = batch
      .filter((r) => r.data[column.key] === undefined)
      .map((r) => ({ rowId: r._id, data: { ...r.data, [column.key]: nextAutoNumber(column, w.now) } }));
    await updateRows(w.trx, w.dialect, w.base.id, rows, null);
  }
}

/**
 * Retype a column and convert its stored cells with the new type's write rules; cells that do not
 * convert are cleared (see docs/base-data.md). No row events: this is a structural change.
 */
async function changeType(w: WriteScope, table: TableMeta, column: ColumnMeta, rawType: unknown, rawData: unknown): Promise<void> {
  const type = checkColumnType(rawType);
  if (type === 'link' || column.type === 'link') throw badRequest('A link column cannot be converted; delete it and add a new column instead.');
  if (table.columns[0] === column) assertFirstColumnType(type);
  const oldType = column.type;
  column.type = type;
  column.data = normalizeColumnData(type, checkColumnData(type, parseData(rawData)), { ...column, type: oldType });
  for await (const batch of scanTable(w.trx, w.base.id, table._id)) {
    const rows = [];
    for (const row of batch) {
      const old = row.data[column.key];
      if (old === undefined) continue;
      const data = { ...row.data };
      delete data[column.key];
      if (!COMPUTED_TYPES.includes(type)) {
        const result = coerceCell(column, carry(old, type));
        if (result.kind === 'set') data[column.key] = result.value;
      }
      rows.push({ rowId: row._id, data });
    }
    await updateRows(w.trx, w.dialect, w.base.id, rows, null);
  }
  if (type === 'auto-number') await numberExistingRows(w, table, column);
}

const SINGLE_VALUED_TEXT = ['text', 'long-text', 'email', 'url', 'auto-number'];

/** Shape an old cell for the new type's coercion: lists become text or their first item. */
function carry(value: unknown, type: string): unknown {
  if (!Array.isArray(value)) return value;
  if (SINGLE_VALUED_TEXT.includes(type)) return value.map((v) => (typeof v === 'object' && v !== null ? String((v as { name?: unknown }).name ?? '') : String(v))).join(', ');
  if (type === 'single-select') return value[0];
  return value;
}
