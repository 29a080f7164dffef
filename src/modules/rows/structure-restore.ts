import { conflict } from '../../shared/errors.js';
import type { BaseWriter, WriteScope } from './base-writer.js';
import { removeColumnIn } from './columns.service.js';
import { configureFormulaColumn, configureTableFormulas, recomputeTable, renameInFormulas } from './formula-columns.js';
import type { ColumnMeta, TableMeta } from './metadata.js';
import type { LostLinkColumn, StructureRestore } from './rows.service.js';
import { storedIdsOf } from './kept-tables.js';
import { recomputeAllLinkFormulas, recomputeLinkFormulasReading } from './link-formula-columns.js';
import { insertEvents } from './row-events.js';
import { scanTable } from './rows.repository.js';
import { linkIdOf } from './structure.js';
import { removeTableIn } from './tables.service.js';

/**
 * Structure changes set back by a restore, inside its write. What changed meanwhile (a table or column
 * gone, a name taken) refuses with 409 and the whole restore rolls back.
 */
export function structureRestore(w: WriteScope, writer: BaseWriter): StructureRestore {
  const table = (tableId: string): TableMeta => {
    const found = w.meta.tables.find((t) => t._id === tableId);
    if (!found) throw conflict(`Table ${tableId} was deleted meanwhile.`);
    return found;
  };
  const column = (t: TableMeta, key: string): ColumnMeta => {
    const found = t.columns.find((c) => c.key === key);
    if (!found) throw conflict(`Column ${key} of table ${t.name} was deleted meanwhile.`);
    return found;
  };
  const tableNameFree = (name: string, except?: string) => {
    if (w.meta.tables.some((t) => t.name === name && t._id !== except)) throw conflict(`A table named ${name} exists; rename it first.`);
  };
  const columnNameFree = (t: TableMeta, name: string, except?: string) => {
    if (t.columns.some((c) => c.name === name && c.key !== except)) throw conflict(`Column ${name} exists in table ${t.name}; rename it first.`);
  };
  const place = (t: TableMeta, c: ColumnMeta, after: string) => {
    const index = t.columns.findIndex((x) => x.key === after);
    if (index < 0) t.columns.push(c);
    else t.columns.splice(index + 1, 0, c);
  };
  const restore: StructureRestore = {
    addTable(deleted, linkColumns) {
      if (w.meta.tables.some((t) => t._id === deleted._id)) throw conflict(`A table with id ${deleted._id} exists; the deleted table cannot come back under its id.`);
      tableNameFree(deleted.name);
      const tableIds = new Set([...w.meta.tables.map((t) => t._id), deleted._id]);
      // A link id a live link column took meanwhile is that column's now: the deleted table's link is not restored.
      const liveLinkIds = new Set(storedIdsOf(w.meta).linkIds);
      const linkedTable = (c: ColumnMeta) => {
        const data = c.data as { table_id?: string; other_table_id?: string } | null;
        return data?.table_id === deleted._id ? data.other_table_id : data?.table_id;
      };
      const restored: TableMeta = structuredClone(deleted);
      const lost = (c: ColumnMeta) => linkIdOf(c) !== null && (!tableIds.has(String(linkedTable(c))) || liveLinkIds.has(linkIdOf(c)!));
      const dropped = new Set(restored.columns.filter(lost).map((c) => c.key));
      const keptLinks = new Set(restored.columns.filter((c) => !dropped.has(c.key)).map(linkIdOf));
      restored.columns = restored.columns.filter((c) => !dropped.has(c.key));
      for (const view of restored.views) view.hidden_columns = view.hidden_columns.filter((key) => !dropped.has(key));
      configureTableFormulas(restored);
      w.meta.tables.push(restored);
      for (const lost of linkColumns) {
        const other = w.meta.tables.find((t) => t._id === lost.tableId);
        if (!other || other.columns.some((c) => c.key === lost.column.key) || !keptLinks.has(linkIdOf(lost.column))) continue;
        const name = other.columns.some((c) => c.name === lost.column.name) ? `${lost.column.name} (restored)` : lost.column.name;
        place(other, { ...structuredClone(lost.column), name }, lost.after);
      }
      w.metadataChanged();
      return restored;
    },
    async revealTable(deleted, linkColumns) {
      const restored = restore.addTable(deleted, linkColumns);
      // Its rows were kept in place (kept-tables.ts): formulas and link formulas see the base as it is now.
      await recomputeTable(w, writer.timeZone, restored);
      await recomputeAllLinkFormulas(w, writer.timeZone, restored);
      await recomputeLinkFormulasReading(w, writer.timeZone, restored);
      // Subscribers see the rows come back as inserts, as for any restore.
      for await (const batch of scanTable(w.trx, w.base.id, restored._id)) w.emit(insertEvents(w.base, restored, batch, w.actor, w.now));
      return restored;
    },
    async removeTable(tableId) {
      await removeTableIn(w, writer, table(tableId));
    },
    renameTable(tableId, name) {
      const t = table(tableId);
      tableNameFree(name, tableId);
      t.name = name;
      w.metadataChanged();
    },
    async addColumn(tableId, deleted, afterKey) {
      const t = table(tableId);
      if (t.columns.some((c) => c.key === deleted.key)) return;
      columnNameFree(t, deleted.name);
      const added = structuredClone(deleted);
      place(t, added, afterKey);
      if (added.type === 'formula') {
        configureFormulaColumn(t, added);
        await recomputeTable(w, writer.timeZone, t);
      }
      w.metadataChanged();
    },
    async removeColumn(tableId, columnKey) {
      const t = table(tableId);
      await removeColumnIn(w, writer.timeZone, t, column(t, columnKey));
    },
    renameColumn(tableId, columnKey, name) {
      const t = table(tableId);
      const c = column(t, columnKey);
      columnNameFree(t, name, columnKey);
      renameInFormulas(t, c.name, name);
      c.name = name;
      w.metadataChanged();
    },
  };
  return restore;
}

export type { LostLinkColumn };
