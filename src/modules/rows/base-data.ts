import type { DialectName, Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { BaseSnapshots, type RevisionChanges } from './base-snapshots.js';
import { BaseWriter } from './base-writer.js';
import { ColumnsService } from './columns.service.js';
import { LinksService } from './links.service.js';
import { RowsService } from './rows.service.js';
import { TablesService } from './tables.service.js';
import { ViewsService } from './views.service.js';
import { ColumnOptionsService } from './column-options.service.js';
import { RowLocksService } from './row-locks.js';
import { ArchivedRowsService } from './archived-rows.js';
import { FormulaPreviewService } from './formula-preview.js';
import { RowIndexes, DEFAULT_ROW_INDEX_OPTIONS, type RowIndexOptions } from './row-indexes.js';
import { GroupSets } from './group-sets.js';

/** The services of the base data API, sharing one writer. */
export interface BaseData {
  writer: BaseWriter;
  rows: RowsService;
  tables: TablesService;
  columns: ColumnsService;
  views: ViewsService;
  links: LinksService;
  columnOptions: ColumnOptionsService;
  locks: RowLocksService;
  archived: ArchivedRowsService;
  /** A formula tried on a table's first rows (the console's formula builder). */
  formulaPreview: FormulaPreviewService;
  /** The whole base, serialized and cached per revision. */
  snapshots: BaseSnapshots;
  /** Expression indexes for the columns big tables are filtered and sorted on. */
  indexes: RowIndexes;
  /** Counts and sums per group value for the columns big tables are grouped by in SQL (group-sets.ts). */
  groupSets: GroupSets;
  /**
   * Loads what reads of big tables look up in memory, the row indexes and the group sets, before the first
   * request (startServer). Loaded on first use otherwise, and the reads that come first go without them:
   * after a restart, a `GROUP BY` over 10,000,000 rows met the 10-s SQL limit instead of reading its set.
   */
  warm(): Promise<void>;
}

/**
 * `onEvents` runs after a commit that wrote change events (the container wakes the dispatcher);
 * `externalChanges` and `revisionChanges` are the database handle's (see DbHandle).
 */
export function createBaseData(
  db: Db,
  dialect: DialectName,
  clock: Clock,
  onEvents: () => void,
  externalChanges?: () => number,
  revisionChanges?: RevisionChanges,
  indexOptions: RowIndexOptions = DEFAULT_ROW_INDEX_OPTIONS,
): BaseData {
  const writer = new BaseWriter(db, dialect, clock, onEvents);
  const indexes = new RowIndexes(db, dialect, () => clock.now(), indexOptions);
  const rows = new RowsService(db, writer, undefined, indexes);
  // Indexes follow the structure: a deleted table or column, or a new value type, drops theirs.
  writer.onStructureChanged(async (base) => indexes.reconcile(base.id, await writer.read(base).catch(() => null)));
  // Group sets follow it too: a deleted table or column, or a new type, drops theirs (and queues the new type's).
  const groupSets = new GroupSets(db, dialect, () => clock.now());
  writer.onStructureChanged(async (base) => groupSets.reconcile(base.id, await writer.read(base).catch(() => null)));
  const snapshots = new BaseSnapshots(db, (base) => rows.dtable(base), {
    ...(externalChanges ? { externalChanges } : {}),
    ...(revisionChanges ? { revisionChanges } : {}),
  });
  writer.onCommitted((base) => snapshots.evict(base.id));
  return {
    writer,
    rows,
    snapshots,
    indexes,
    groupSets,
    warm: async () => {
      await Promise.all([indexes.warm(), groupSets.warm()]);
    },
    tables: new TablesService(writer, db),
    columns: new ColumnsService(writer),
    views: new ViewsService(writer),
    links: new LinksService(db, writer),
    columnOptions: new ColumnOptionsService(writer),
    locks: new RowLocksService(writer),
    archived: new ArchivedRowsService(writer),
    formulaPreview: new FormulaPreviewService(db, writer),
  };
}
