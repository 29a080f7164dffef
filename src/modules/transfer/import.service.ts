import type { AccountUser } from '../accounts/index.js';
import type { BaseData, ReplacedTable, StagedHold, TableMeta } from '../rows/index.js';
import { findTable } from '../rows/index.js';
import type { BasesService } from '../workspaces/index.js';
import type { BaseListing } from '../access/index.js';
import { badRequest } from '../../shared/errors.js';
import { ColumnStats, convertCell, headerNames, looksLikeFormula, type ColumnPlan } from './infer.js';
import { openSheets, type RawCell, type SourceKind } from './import-source.js';
import { checkZip, type ZipLimits } from './zip-guard.js';
import { putWorkbookFirst } from './xlsx-order.js';
import type { ImportJob, ImportJobs } from './import-jobs.js';
import { mapNewColumns, mapToTable, type ColumnMapping } from './column-mapping.js';

/** What the first pass found in one sheet: the columns it would create and a few rows. */
export interface SheetPlan {
  name: string;
  columns: ColumnPlan[];
  rows: number;
  sample: Array<Record<string, unknown>>;
}

export interface ImportFile {
  path: string;
  kind: SourceKind;
  /** The file's name without its extension: a CSV's table name, a new base's name. */
  stem: string;
}

/** Rows per write: one change (one transaction, its events) each, as the rows API's largest append. */
export const IMPORT_BATCH = 1000;
const SAMPLE_ROWS = 10;
/** The rows API's first-column rule: other inferred types become text there. */
const FIRST_COLUMN_TYPES = new Set(['text', 'number', 'date', 'single-select']);

type Row = Record<string, unknown>;

/**
 * CSV and XLSX import in two streaming passes over the uploaded temp file: the first checks the
 * whole file (encoding, ragged rows, formulas, a zip bomb) and infers the column types, so a bad
 * file is refused before anything is written; the second converts and appends in batches through
 * the rows API's writer (each batch one change with its events, so webhooks and rules fire).
 */
export class ImportService {
  constructor(
    private readonly baseData: BaseData,
    private readonly bases: BasesService,
    private readonly zipLimits: ZipLimits,
    private readonly jobs: ImportJobs,
  ) {}

  /** Pass one: the sheets as they would be imported (also the preview endpoint's answer). */
  async analyze(file: ImportFile): Promise<SheetPlan[]> {
    if (file.kind === 'xlsx') {
      await checkZip(file.path, this.zipLimits);
      await putWorkbookFirst(file.path);
    }
    const plans: SheetPlan[] = [];
    for await (const sheet of openSheets(file.path, file.kind, file.stem)) {
      const names = headerNames(sheet.header);
      const stats = names.map(() => new ColumnStats());
      const sample: Row[] = [];
      let rows = 0;
      for await (const row of sheet.rows) {
        checkRow(row.cells, row.line, names);
        row.cells.forEach((cell, i) => stats[i]?.observe(cell));
        rows++;
        if (sample.length < SAMPLE_ROWS) sample.push(Object.fromEntries(names.map((n, i) => [n, row.cells[i] ?? null])));
      }
      const columns = names.map((name, i) => ({ ...stats[i]!.plan(name), types: stats[i]!.fits() }));
      if (columns.length > 0 && !FIRST_COLUMN_TYPES.has(columns[0]!.type)) columns[0] = { name: columns[0]!.name, type: 'text', types: columns[0]!.types };
      plans.push({ name: sheet.name, columns, rows, sample: sample.map((r) => convertRow(columns, Object.values(r) as RawCell[])) });
    }
    if (plans.length === 0) throw badRequest('The file has no rows to import.');
    return plans;
  }

  /**
   * A new base named after the file, one table per sheet. The sheets' tables are staged (in no
   * metadata) and replace the blank base's tables only at the publish, together with their rows; a
   * failure while writing moves the base to the trash again.
   */
  async toNewBase(user: AccountUser, workspaceId: unknown, file: ImportFile): Promise<BaseListing> {
    const plans = await this.analyze(file);
    const base = await this.bases.create(user, { name: file.stem, workspaceId });
    const actor = actorOf(user);
    let recorded = false;
    await this.jobs.run(base.id, 'new-base', actor, true, (job) => {
      recorded = true;
      return this.staged(base, actor, job, async () => {
        const blank = await this.baseData.tables.asTheyAre(base);
        return this.newTables(base, actor, job, plans, file, blank);
      });
    }).catch(async (error: unknown) => {
      // Once the job is recorded its undo removes the base; before that, the base goes here.
      if (!recorded) await this.bases.trash.moveToTrash(base).catch(() => undefined);
      throw error;
    });
    return base;
  }

  /**
   * A new table (per sheet) in an existing base, staged: no reader sees it until the publish adds it
   * with all its rows; a failed or killed import leaves no table.
   */
  async toNewTables(user: AccountUser, base: BaseListing, file: ImportFile, mapping?: ColumnMapping): Promise<string[]> {
    const plans = (await this.analyze(file)).map((p) => ({ ...p, columns: mapNewColumns(p.name, p.columns, mapping) }));
    const meta = await this.baseData.writer.read(base);
    for (const plan of plans) if (meta.tables.some((t) => t.name === plan.name)) throw badRequest(`Table ${plan.name} exists.`);
    const actor = actorOf(user);
    await this.jobs.run(base.id, 'new-tables', actor, false, (job) => this.staged(base, actor, job, async () => this.newTables(base, actor, job, plans, file, [])));
    return plans.map((p) => p.name);
  }

  /** Appends the (first) sheet's rows to a table; columns match by name (or as `mapping` says), others are ignored. */
  async append(user: AccountUser, base: BaseListing, tableName: unknown, file: ImportFile, mapping?: ColumnMapping): Promise<number> {
    const table = findTable(await this.baseData.writer.read(base), { table_name: tableName });
    const plans = (await this.analyze(file)).slice(0, 1);
    const target = { ...plans[0]!, columns: mapToTable(plans[0]!.name, table, plans[0]!.columns, mapping) };
    const actor = actorOf(user);
    return this.jobs.run(base.id, 'append', actor, false, (job) =>
      this.staged(base, actor, job, async () => ({ tableIds: [table._id], hold: job.hold, write: (hold) => this.fill(file, [target], base, actor, () => table._id, hold) })),
    );
  }

  /**
   * Updates the rows whose `keys` columns equal the file row's, appends the rest
   * (`update-table-via-excel-csv`). Matching reads the table's key values once into memory.
   */
  async update(user: AccountUser, base: BaseListing, tableName: unknown, keyColumns: unknown, file: ImportFile): Promise<{ updated: number; appended: number }> {
    const meta = await this.baseData.writer.read(base);
    const table = findTable(meta, { table_name: tableName });
    if (typeof keyColumns !== 'string' || keyColumns.trim() === '') throw badRequest('selected_columns invalid.');
    const keys = keyColumns.split(',').map((k) => k.trim());
    for (const k of keys) if (!table.columns.some((c) => c.name === k)) throw badRequest(`Column ${k} not found.`);
    const sheet = (await this.analyze(file))[0]!;
    const plan = { ...sheet, columns: mapToTable(sheet.name, table, sheet.columns, undefined) };
    for (const k of keys) if (!plan.columns.some((c) => c.name === k)) throw badRequest(`Column ${k} is not in the file.`);
    const actor = actorOf(user);
    const existing = await this.keyIndex(base, table, keys);
    let updated = 0;
    let appended = 0;
    await this.jobs.run(base.id, 'update', actor, false, (job) =>
      this.staged(base, actor, job, async () => ({
        tableIds: [table._id],
        hold: job.hold,
        write: (hold) =>
          this.batches(file, [plan], async (_plan, rows) => {
            const updates: Array<{ row_id: string; row: Row }> = [];
            const inserts: Row[] = [];
            for (const row of rows) {
              const id = existing.get(keyOf(keys.map((k) => row[k])));
              if (id) updates.push({ row_id: id, row });
              else inserts.push(row);
            }
            if (updates.length > 0) await this.baseData.rows.update(base, actor, { table_id: table._id, updates }, hold);
            if (inserts.length > 0) await this.baseData.rows.append(base, actor, { table_id: table._id, rows: inserts }, hold);
            updated += updates.length;
            appended += inserts.length;
          }),
      })),
    );
    return { updated, appended };
  }

  /**
   * Pass two as one unit: `prepare` stages the new tables (if any) and names the existing ones filled;
   * every batch is then written (each its own short transaction, so other writers of the server go on)
   * with its events held aside and its new rows staged (invisible to every read); when all are in, one
   * transaction adds the new tables to the metadata, moves the staged rows into their tables, sends the
   * events to the outbox and closes the job record, so reads, listings, webhooks, rules and live clients
   * see the whole import or nothing. A failure on the way (database error, disk full, a limit, a table
   * deleted meanwhile) undoes it; a crash leaves the job record, and the next start-up undoes it
   * (ImportJobs.recover).
   */
  private async staged<T>(
    base: BaseListing,
    actor: ReturnType<typeof actorOf>,
    job: ImportJob,
    prepare: () => Promise<{ tableIds: string[]; hold: StagedHold; write: (hold: StagedHold) => Promise<T> }>,
  ): Promise<T> {
    let result: T;
    try {
      const { tableIds, hold, write } = await prepare();
      result = await write(hold);
      await this.baseData.rows.publishHold(base, actor, hold, tableIds, (trx) => job.close(trx));
      const written = new Set([...tableIds, ...(hold.newTables ?? []).map((t) => t._id)]);
      const meta = await this.baseData.writer.read(base).catch(() => null);
      this.baseData.indexes.noteBulkWrite(base.id, meta?.tables.filter((t) => written.has(t._id)) ?? []);
    } catch (error) {
      // The caller gets the failure's own answer; an undo that fails too is finished at the next start-up.
      await job.undo().catch(() => undefined);
      throw error;
    }
    return result;
  }

  /**
   * Stages a table per sheet (replacing the tables `replaces` at the publish, unless someone worked in
   * them meanwhile) and the write that fills them. Their rows go under their ids from the first batch,
   * so the job records the ids first: an undo after a kill deletes what is stored under them.
   */
  private async newTables(base: BaseListing, actor: ReturnType<typeof actorOf>, job: ImportJob, plans: SheetPlan[], file: ImportFile, replaces: ReplacedTable[]) {
    const tables: TableMeta[] = [];
    for (const plan of plans) {
      const body = { table_name: plan.name, columns: plan.columns.map((c) => ({ column_name: c.name, column_type: c.type, ...(c.data ? { column_data: c.data } : {}) })) };
      tables.push(await this.baseData.tables.stage(base, body, tables, replaces.length > 0));
    }
    await job.recordNewTables(tables.map((t) => t._id));
    const hold: StagedHold = { ...job.hold, newTables: tables, replaces };
    return { tableIds: [] as string[], hold, write: (h: StagedHold) => this.fill(file, plans, base, actor, (_plan, i) => tables[i]!._id, h) };
  }

  /** Pass two: appends every sheet's rows into its table, a batch per change. */
  private async fill(file: ImportFile, plans: SheetPlan[], base: BaseListing, actor: ReturnType<typeof actorOf>, tableOf: (plan: SheetPlan, index: number) => string, hold: StagedHold): Promise<number> {
    let total = 0;
    await this.batches(file, plans, async (plan, rows) => {
      await this.baseData.rows.append(base, actor, { table_id: tableOf(plan, plans.indexOf(plan)), rows }, hold);
      total += rows.length;
    });
    return total;
  }

  /**
   * Reads the file's rows and hands them to `write` a batch at a time, in order. The next batch is read
   * and converted while the previous one is being written (PostgreSQL works in its own process
   * meanwhile), so at most one write is in flight and two batches are in memory; whatever ends the read,
   * the write in flight is settled before this returns, so an undo never races a batch.
   */
  private async batches(file: ImportFile, plans: SheetPlan[], write: (plan: SheetPlan, rows: Row[]) => Promise<void>): Promise<void> {
    let pending: Promise<void> = Promise.resolve();
    const queue = async (plan: SheetPlan, rows: Row[]) => {
      await pending; // the previous batch's failure ends the import here
      pending = write(plan, rows);
      pending.catch(() => undefined); // awaited at the next batch or at the end, never unheard
    };
    try {
      let index = 0;
      // Pass one checked the whole file: this read skips the checks.
      for await (const sheet of openSheets(file.path, file.kind, file.stem, { checked: true })) {
        const plan = plans[index++];
        if (!plan) break;
        const positions = headerNames(sheet.header).map((name) => plan.columns.findIndex((c) => (c.source ?? c.name) === name));
        let batch: Row[] = [];
        for await (const row of sheet.rows) {
          const values: RawCell[] = plan.columns.map(() => null);
          positions.forEach((p, i) => {
            if (p !== -1) values[p] = row.cells[i] ?? null;
          });
          batch.push(convertRow(plan.columns, values));
          if (batch.length === IMPORT_BATCH) {
            await queue(plan, batch);
            batch = [];
          }
        }
        if (batch.length > 0) await queue(plan, batch);
      }
    } catch (error) {
      await pending.catch(() => undefined);
      throw error;
    }
    await pending;
  }

  private async keyIndex(base: BaseListing, table: TableMeta, keys: string[]): Promise<Map<string, string>> {
    const index = new Map<string, string>();
    for await (const rows of this.baseData.rows.scan(base, { table_id: table._id, convert_keys: true }, {})) {
      for (const r of rows) index.set(keyOf(keys.map((k) => r[k])), r._id as string);
    }
    return index;
  }
}

function actorOf(user: AccountUser) {
  return { user: user.virtualId, app: null, userId: user.id };
}

function keyOf(values: unknown[]): string {
  return JSON.stringify(values.map((v) => (v === undefined || v === null ? '' : String(v))));
}

function checkRow(cells: RawCell[], line: number, names: string[]): void {
  for (let i = names.length; i < cells.length; i++) {
    if (cells[i] !== null && cells[i] !== '') throw badRequest(`Row ${line}: it has more cells than the header has columns.`);
  }
  cells.forEach((cell, i) => {
    if (typeof cell === 'string' && looksLikeFormula(cell)) {
      throw badRequest(`Row ${line}: cell ${i + 1} (${names[i] ?? '?'}) holds a formula a spreadsheet would run.`);
    }
  });
}

function convertRow(columns: ColumnPlan[], values: RawCell[]): Row {
  const row: Row = {};
  columns.forEach((c, i) => {
    const v = convertCell(c, values[i] ?? null);
    if (v !== undefined) row[c.name] = v;
  });
  return row;
}
