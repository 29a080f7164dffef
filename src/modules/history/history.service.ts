import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { countRowComments, listComments } from '../comments/index.js';
import { loadMetadata, type Actor, type BaseRef, type RowsService } from '../rows/index.js';
import { findOperation, pruneOperations, replaceChanges } from './history.repository.js';
import { fillAppendedCells } from './insert-cells.js';
import { countAllRowOperations, listOperations } from './row-operations.js';
import type { Cells, LoggedChange, Operation, OperationFilter } from './history.types.js';
import { operationScope, scopeOperation, type OperationScope } from './scoped-operations.js';
import { presentActivity, presentDbOperation, presentOperation } from './present.js';
import { assertStructureRevertible, conflictError, conflictsOf, revert, revertStructure } from './restore.js';
import { presentTrashedTable, purgeTrashedTable, purgeTrashedTables, restoreTrashedTable, type BaseFiles } from './table-trash.js';
import { countTrashedTables, findTrashedTable, listTrashedTables, trashOfDelete } from './table-trash.repository.js';
import { trashedRow, trashedRows } from './row-trash.js';

const DAY_MS = 86_400_000;
/** Operations pruned per transaction: short deletes, no long lock. */
const PRUNE_BATCH = 1000;
export const MAX_PER_PAGE = 100;
/** Offset paging stops here; deeper pages use the keyset (`before_op_id`). */
export const MAX_OFFSET = 10_000;
/** A table-scoped count of a row's operations reads them in batches of this many, at most SCOPED_COUNT_MAX (the deepest page and then some). */
const SCOPED_COUNT_BATCH = 500;
const SCOPED_COUNT_MAX = 2 * MAX_OFFSET;

export interface Paging {
  page: number;
  perPage: number;
}

/** The operation log, row history and restore (see docs/history.md). */
export class HistoryService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly rows: RowsService,
    private readonly retentionDays: number,
    private readonly trashRetentionDays = 30,
    /** Where a purged table's files are deleted (none: files stay). */
    private readonly files?: BaseFiles,
  ) {}

  private trashSince(): number {
    return this.clock.now() - this.trashRetentionDays * DAY_MS;
  }

  /** `trash/rows/`: rows deleted less than TRASH_RETENTION_DAYS ago and not restored since, newest first. */
  async trashRows(base: BaseRef, tableId: string | undefined, paging: Paging, scopeTables?: readonly string[]) {
    const offset = this.offset(paging);
    const meta = await loadMetadata(this.db, base.id);
    const listed = meta.tables.filter((t) => scopeTables === undefined || scopeTables.includes(t._id) || scopeTables.includes(t.name));
    const found = await trashedRows(this.db, base.id, this.trashSince(), new Set(listed.map((t) => t._id)), tableId, offset + paging.perPage);
    // What a listed row shows of its cells: its table's current columns, less those beyond a table scope.
    const hidden = scopeTables === undefined ? undefined : operationScope(meta, listed.map((t) => t._id)).hidden;
    const shown = new Map(listed.map((t) => [t._id, new Set(t.columns.map((c) => c.key).filter((key) => !hidden?.get(t._id)?.has(key)))]));
    return {
      rows: found.slice(offset).map(({ op, change }) => ({
        _id: change.r,
        table_id: change.t,
        table_name: meta.tables.find((t) => t._id === change.t)?.name ?? null,
        row_name: change.n,
        deleted_by: op.opUser,
        deleted_at: new Date(op.opTime).toISOString(),
        op_id: op.id,
        row_data: { _id: change.r, ...cellsIn(change.b, shown.get(change.t)) },
      })),
    };
  }

  /** Puts one trashed row back (cells, links to rows that exist, comments) as a restore of its deletion. */
  async restoreTrashRow(base: BaseRef, actor: Actor, rowId: string): Promise<{ success: true }> {
    const found = await trashedRow(this.db, base.id, rowId, this.trashSince());
    // A row of a trashed table is not in the row trash: it comes back with its table (or goes with it).
    const live = found && (await loadMetadata(this.db, base.id)).tables.some((t) => t._id === found.change.t);
    if (!found || !live) throw notFound(`Row ${rowId} is not in the trash.`);
    const op = { ...found.op, changes: { rows: [found.change] } };
    await this.rows.restore(base, { ...actor, reverts: op.id }, (scope) => revert(scope, op));
    return { success: true };
  }

  private offset(paging: Paging): number {
    const offset = (paging.page - 1) * paging.perPage;
    if (offset > MAX_OFFSET) throw badRequest(`page too deep: page through older operations with before_op_id.`);
    return offset;
  }

  /** The ids of the base's tables a table-scoped token's `tables` (names or ids) name. */
  async tableIdsIn(base: BaseRef, scopeTables: readonly string[]): Promise<string[]> {
    const meta = await loadMetadata(this.db, base.id);
    return meta.tables.filter((t) => scopeTables.includes(t._id) || scopeTables.includes(t.name)).map((t) => t._id);
  }

  async operations(base: BaseRef, filter: OperationFilter, paging: Paging) {
    const ops = await this.listed(base, filter, paging);
    return { operations: ops.map(presentOperation) };
  }

  async dbOperations(base: BaseRef, filter: OperationFilter, paging: Paging) {
    const ops = await this.listed(base, filter, paging);
    return { operations: ops.map((op) => presentDbOperation(op, base.uuid)) };
  }

  /** A page of operations with their appended cells, as a table-scoped listing (`filter.tableIds`) may read them. */
  private async listed(base: BaseRef, filter: OperationFilter, paging: Paging): Promise<Operation[]> {
    const ops = await listOperations(this.db, base.id, filter, paging.perPage, this.offset(paging));
    await fillAppendedCells(this.db, base.id, ops);
    return filter.tableIds === undefined ? ops : this.scoped(ops, operationScope(await loadMetadata(this.db, base.id), filter.tableIds));
  }

  private scoped(ops: Operation[], scope: OperationScope): Operation[] {
    return ops.flatMap((op) => {
      const seen = scopeOperation(op, scope);
      return seen ? [seen] : [];
    });
  }

  /**
   * A row's history (its operations' changes to it, and its comments), newest first; without a row,
   * the base's recent row changes.
   */
  async activities(base: BaseRef, rowId: string | undefined, paging: Paging, tableIds?: readonly string[]) {
    const offset = this.offset(paging);
    const meta = await loadMetadata(this.db, base.id);
    const filter: OperationFilter = { ...(rowId === undefined ? {} : { rowId }), ...(tableIds === undefined ? {} : { tableIds }) };
    const listed = await listOperations(this.db, base.id, filter, offset + paging.perPage);
    await fillAppendedCells(this.db, base.id, listed, rowId);
    const scope = tableIds === undefined ? undefined : operationScope(meta, tableIds);
    const ops = scope === undefined ? listed : this.scoped(listed, scope);
    const entries = ops.flatMap((op) =>
      op.changes.rows.filter((c) => (rowId === undefined || c.r === rowId) && (tableIds === undefined || tableIds.includes(c.t))).map((c) => ({ time: op.opTime, id: op.id, body: presentActivity(op, c, meta, base.uuid) })),
    );
    let total = entries.length;
    if (rowId !== undefined) {
      const comments = await listComments(this.db, base.id, null, rowId, 0, offset + paging.perPage);
      for (const c of comments) {
        if (tableIds !== undefined && !tableIds.includes(c.table_id)) continue;
        entries.push({
          time: Number(c.created_at),
          id: Number(c.id),
          body: {
            id: Number(c.id),
            dtable_uuid: base.uuid,
            row_id: c.row_id,
            op_user: c.author,
            op_type: 'add_comment',
            op_time: new Date(Number(c.created_at)).toISOString(),
            detail: { table_id: c.table_id, comment: c.comment },
          },
        });
      }
      const operations = scope === undefined ? await countAllRowOperations(this.db, base.id, rowId) : await this.countScopedRowOperations(base.id, rowId, tableIds!, scope);
      total = operations + (await countRowComments(this.db, base.id, rowId, tableIds));
    }
    entries.sort((a, b) => b.time - a.time || b.id - a.id);
    return { activities: entries.slice(offset, offset + paging.perPage).map((e) => e.body), total_count: total };
  }

  /**
   * How many of the row's operations a table scope lets it read (those of its tables with a change of the
   * row left once scoped), as its listing shows them; a row's first SCOPED_COUNT_MAX operations are read.
   */
  private async countScopedRowOperations(baseId: number, rowId: string, tableIds: readonly string[], scope: OperationScope): Promise<number> {
    let counted = 0;
    for (let read = 0, beforeId: number | undefined; read < SCOPED_COUNT_MAX; ) {
      const ops = await listOperations(this.db, baseId, { rowId, tableIds, ...(beforeId === undefined ? {} : { beforeId }) }, SCOPED_COUNT_BATCH);
      counted += ops.filter((op) => scopeOperation(op, scope)?.changes.rows.some((c) => c.r === rowId)).length;
      read += ops.length;
      if (ops.length < SCOPED_COUNT_BATCH) break;
      beforeId = ops[ops.length - 1]!.id;
    }
    return counted;
  }

  /**
   * Reverts an operation as a new write (events, webhooks and rules as for any write) logged as
   * reverting it; refused with 409 when later operations changed the same cells, unless `overwrite`.
   */
  async restore(base: BaseRef, actor: Actor, opId: number, overwrite: boolean): Promise<{ success: true }> {
    const op = await findOperation(this.db, base.id, opId);
    if (!op) throw notFound('Operation not found.');
    assertStructureRevertible(op);
    await this.rows.restore(base, { ...actor, reverts: op.id }, async (scope) => {
      const conflicts = await conflictsOf(scope, op);
      if (conflicts.length > 0 && !overwrite) throw conflictError(op.id, conflicts);
      await revert(scope, op);
      await revertStructure(scope, op, (tableId) => trashOfDelete(scope.trx, base.id, tableId, op.opTime));
    });
    return { success: true };
  }

  /** `trash/tables/`: the base's deleted tables still in the trash, most recently deleted first. */
  async trashTables(base: BaseRef, paging: Paging) {
    const since = this.trashSince();
    const rows = await listTrashedTables(this.db, base.id, since, paging.perPage, this.offset(paging));
    return { count: await countTrashedTables(this.db, base.id, since), tables: await Promise.all(rows.map((row) => presentTrashedTable(this.db, row))) };
  }

  /** Puts a trashed table back (rows, links, the other tables' link columns) as one new write. */
  async restoreTrashTable(base: BaseRef, actor: Actor, trashId: number) {
    const trash = await findTrashedTable(this.db, base.id, trashId, this.trashSince());
    if (!trash) throw notFound(`Table ${trashId} is not in the trash.`);
    const table = await this.rows.restore(base, actor, async (scope) => {
      // Read again in the write: a concurrent restore or purge of the same entry leaves nothing to do.
      const current = await findTrashedTable(scope.trx, base.id, trashId, this.trashSince());
      if (!current) throw notFound(`Table ${trashId} is not in the trash.`);
      return restoreTrashedTable(scope, current);
    });
    return { success: true as const, table_id: table._id, table_name: table.name };
  }

  /** Deletes a trashed table for good. */
  async purgeTrashTable(base: BaseRef, trashId: number): Promise<{ success: true }> {
    const trash = await findTrashedTable(this.db, base.id, trashId, 0);
    if (!trash) throw notFound(`Table ${trashId} is not in the trash.`);
    if (!(await purgeTrashedTable(this.db, trash.id, this.files))) throw notFound(`Table ${trashId} is not in the trash.`);
    return { success: true };
  }

  /** Deletes a trashed row for good: its deletion's logged cells and links are dropped (it can no longer come back). */
  async purgeTrashRow(base: BaseRef, rowId: string): Promise<{ success: true }> {
    const found = await trashedRow(this.db, base.id, rowId, this.trashSince());
    // A row of a trashed table is not in the row trash: it comes back with its table (or goes with it).
    const live = found && (await loadMetadata(this.db, base.id)).tables.some((t) => t._id === found.change.t);
    if (!found || !live) throw notFound(`Row ${rowId} is not in the trash.`);
    // Every logged value of the row goes (its inserts and changes too), its history keeps who and when
    // (and when it was created, by which its append is found: row-operations.ts).
    const scrub = (c: LoggedChange): LoggedChange =>
      c.r === rowId ? { o: c.o, t: c.t, r: c.r, n: '', ...(c.a ? { a: {} } : {}), ...(c.b ? { b: {} } : {}), ...(c.c ? { c: c.c } : {}), ...(c.f ? { f: 1 as const } : {}), x: 1 } : c;
    await this.db.transaction().execute(async (trx) => {
      for (let beforeId: number | undefined; ; ) {
        const ops = await listOperations(trx, base.id, beforeId === undefined ? { rowId } : { rowId, beforeId }, 500);
        for (const op of ops) await replaceChanges(trx, op.id, { ...op.changes, rows: op.changes.rows.map(scrub) });
        if (ops.length < 500) break;
        beforeId = ops[ops.length - 1]!.id;
      }
    });
    return { success: true };
  }

  /** The scheduler's tick: trashed tables older than TRASH_RETENTION_DAYS go for good, in batches. */
  async purgeExpiredTrash(now = this.clock.now()): Promise<{ purged: number }> {
    return { purged: await purgeTrashedTables(this.db, now - this.trashRetentionDays * DAY_MS, this.files) };
  }

  /** Deletes operations older than the retention, in batches; returns how many. */
  async prune(now = this.clock.now()): Promise<number> {
    if (this.retentionDays === 0) return 0;
    const cutoff = now - this.retentionDays * DAY_MS;
    let total = 0;
    for (;;) {
      const n = await pruneOperations(this.db, cutoff, PRUNE_BATCH);
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  }
}

/** The cells of `cells` whose columns are in `columns` (a deleted column's, or one a scope hides, are left out). */
function cellsIn(cells: Cells | undefined, columns: ReadonlySet<string> | undefined): Cells {
  return Object.fromEntries(Object.entries(cells ?? {}).filter(([key]) => columns?.has(key)));
}
