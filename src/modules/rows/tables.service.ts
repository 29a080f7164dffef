import { badRequest } from '../../shared/errors.js';
import type { Actor, BaseRef, BaseWriter, WriteScope } from './base-writer.js';
import { newColumn, newTable } from './default-metadata.js';
import { newRowId, newShortId } from './ids.js';
import { freeLinkId, freeTableId, freeTableIdIn } from './kept-tables.js';
import type { Executor } from '../../db/index.js';
import { removeLinkColumn } from './links.repository.js';
import { findTable, type ColumnMeta, type TableMeta } from './metadata.js';
import { deleteTableRows, insertRows, rowsFingerprint, scanTable } from './rows.repository.js';
import type { ReplacedTable } from './rows.service.js';
import { insertEvents } from './row-events.js';
import { presentNewTable } from './structure.present.js';
import { computeFormulas, configureTableFormulas } from './formula-columns.js';
import { addLinkColumn, assertFirstColumnType, buildColumn, checkTableName, linkIdOf, removeLinkColumns } from './structure.js';
import { checkColumnName } from './column-types.js';

type Body = Record<string, unknown>;

/** Tables: create (with columns), rename, delete. Structural changes emit no row events. */
export class TablesService {
  constructor(
    private readonly writer: BaseWriter,
    private readonly db: Executor,
  ) {}

  /** Draws a candidate id for `stage` (replaceable in tests, to make a draw meet a taken id). */
  drawStagedId: (taken: string[]) => string = newShortId;

  create(base: BaseRef, actor: Actor, body: Body) {
    const name = checkTableName(body.table_name);
    const specs = columnSpecs(body.columns);
    return this.writer.write(base, actor, async (w) => {
      if (w.meta.tables.some((t) => t.name === name)) throw badRequest(`Table ${name} exists.`);
      const { table, links } = buildTable(await freeTableId(w), name, specs);
      w.meta.tables.push(table);
      for (const link of links) {
        if (table.columns.some((c) => c.name === link.name)) throw badRequest(`Column ${link.name} exists.`);
        addLinkColumn(w.meta, table, link.name, link.data, undefined, await freeLinkId(w));
      }
      w.metadataChanged();
      return presentNewTable(table);
    });
  }

  /**
   * A new table as `create` would make it, but stored nowhere: a multi-batch write (an import) fills it
   * staged and `RowsService.publishHold` adds it to the metadata together with its rows (StagedHold
   * `newTables`), so no reader sees it before. Its id is none of `taken` nor of the base's tables, and
   * no row is stored under it (a trashed table's kept rows, another import's unpublished table): the
   * write stores its rows under that id from the start. Its name must be free unless `freeNames` (the
   * base's tables make way for it at the publish). No link columns: a link needs the other table's
   * metadata changed too.
   */
  async stage(base: BaseRef, body: Body, taken: readonly TableMeta[] = [], freeNames = false): Promise<TableMeta> {
    const name = checkTableName(body.table_name);
    const specs = columnSpecs(body.columns);
    if (specs.some((s) => s.column_type === 'link')) throw badRequest('A new table of an import has no link columns.');
    const meta = await this.writer.read(base);
    if ([...taken, ...(freeNames ? [] : meta.tables)].some((t) => t.name === name)) throw badRequest(`Table ${name} exists.`);
    return buildTable(await freeTableIdIn(this.db, base.id, [...meta.tables, ...taken].map((t) => t._id), this.drawStagedId), name, specs).table;
  }

  /** The base's tables as they are now, each with its rows' fingerprint: what a staged write may replace (StagedHold `replaces`). */
  async asTheyAre(base: BaseRef): Promise<ReplacedTable[]> {
    const meta = await this.writer.read(base);
    const tables: ReplacedTable[] = [];
    for (const table of meta.tables) tables.push({ table, rows: await rowsFingerprint(this.db, base.id, table._id) });
    return tables;
  }

  /**
   * `POST …/tables/duplicate-table/`: a copy named `<name>(copy)` with the same columns and views
   * and, with `is_duplicate_records`, copies of the rows (new row ids, one insert event each). Link
   * columns are left out of the copy: a link belongs to one pair of tables.
   */
  duplicate(base: BaseRef, actor: Actor, body: Body) {
    const withRecords = body.is_duplicate_records === true || body.is_duplicate_records === 'true';
    return this.writer.write(base, actor, async (w) => {
      const source = findTable(w.meta, body);
      const taken = new Set(w.meta.tables.map((t) => t.name));
      let name = `${source.name}(copy)`;
      for (let n = 2; taken.has(name); n++) name = `${source.name}(copy ${n})`;
      const columns = source.columns.filter((c) => linkIdOf(c) === null);
      const linkKeys = new Set(source.columns.filter((c) => linkIdOf(c) !== null).map((c) => c.key));
      const copy: TableMeta = structuredClone({ ...source, columns });
      copy._id = await freeTableId(w);
      copy.name = checkTableName(name);
      for (const view of copy.views) view.hidden_columns = view.hidden_columns.filter((key) => !linkKeys.has(key));
      w.meta.tables.push(copy);
      w.metadataChanged();
      if (withRecords) {
        for await (const batch of scanTable(w.trx, base.id, source._id)) {
          const rows = batch.map((r) => ({ ...r, _id: newRowId(), _ctime: w.now, _mtime: w.now, _creator: actor.user, _last_modifier: actor.user }));
          // The copy has no links: its link formulas start empty, its formulas see the new row fields.
          await computeFormulas(w, this.writer.timeZone, copy, rows, true);
          await insertRows(w.trx, base.id, copy._id, rows);
          w.emit(insertEvents(base, copy, rows, actor, w.now));
        }
      }
      return presentNewTable(copy);
    });
  }

  async rename(base: BaseRef, actor: Actor, body: Body) {
    const newName = checkTableName(body.new_table_name, 'new_table_name');
    await this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      if (table.name === newName) return;
      if (w.meta.tables.some((t) => t.name === newName)) throw badRequest(`Table ${newName} exists.`);
      table.name = newName;
      w.metadataChanged();
    });
    return { success: true as const };
  }

  /** Deletes a table; it goes to the trash (the history module's hook) unless `trash` is false (an import's own tables). */
  async remove(base: BaseRef, actor: Actor, body: Body, trash = true) {
    await this.writer.write(base, actor, async (w) => {
      const table = findTable(w.meta, body);
      await removeTableIn(w, this.writer, table, trash);
    });
    return { success: true as const };
  }
}

function columnSpecs(value: unknown): Body[] {
  const specs = value === undefined || value === null ? [] : value;
  if (!Array.isArray(specs) || !specs.every((s) => typeof s === 'object' && s !== null && !Array.isArray(s))) throw badRequest('columns invalid.');
  return specs as Body[];
}

/** A new table's metadata from the create call's column specs; link columns are returned apart (they change the other table too). */
function buildTable(id: string, name: string, specs: Body[]): { table: TableMeta; links: Array<{ name: string; data: unknown }> } {
  const table = newTable(id, name, []);
  const links: Array<{ name: string; data: unknown }> = [];
  specs.forEach((spec, index) => {
    if (spec.column_type === 'link') {
      if (index === 0) assertFirstColumnType('link');
      const linkName = checkColumnName(spec.column_name);
      if (table.columns.some((c) => c.name === linkName) || links.some((l) => l.name === linkName)) throw badRequest(`Column ${linkName} exists.`);
      links.push({ name: linkName, data: spec.column_data });
      return;
    }
    const column = buildColumn(table, spec, index === 0 ? '0000' : undefined);
    if (index === 0) assertFirstColumnType(column.type);
    table.columns.push(column);
  });
  if (table.columns.length === 0) table.columns.push(newColumn('0000', 'Name', 'text', null));
  configureTableFormulas(table);
  return { table, links };
}

/**
 * A table's delete inside a write. With a trash (the history module's hook), the table and the other
 * tables' link columns to it leave the metadata and nothing else changes: its rows and links stay
 * stored under its ids (kept-tables.ts), so the delete costs the same at 100 rows and 100,000. Without
 * one (an import's own tables), its links and rows are deleted.
 */
export async function removeTableIn(w: WriteScope, writer: BaseWriter, table: TableMeta, trash = true): Promise<void> {
  if (w.meta.tables.length === 1) throw badRequest('The last table of a base cannot be deleted.');
  const kept = trash && writer.tableDeleteHooks.length > 0;
  if (kept) {
    for (const hook of writer.tableDeleteHooks) await hook({ trx: w.trx, base: w.base, actor: w.actor, now: w.now, table, meta: w.meta });
  }
  for (const linkId of linkIds(table.columns)) {
    removeLinkColumns(w.meta, linkId);
    if (!kept) await removeLinkColumn(w.trx, w.base.id, linkId);
  }
  w.meta.tables = w.meta.tables.filter((t: TableMeta) => t._id !== table._id);
  if (!kept) await deleteTableRows(w.trx, w.base.id, table._id);
  w.metadataChanged();
}

function linkIds(columns: ColumnMeta[]): string[] {
  return columns.map(linkIdOf).filter((id): id is string => id !== null);
}
