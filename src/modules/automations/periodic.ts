import type { Db, DialectName } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { Expression, SqlBool } from 'kysely';
import type { Executor } from '../../db/index.js';
import { filterToSql, indexableTerms, parseFilters, type CompiledFilter, type FilterContext } from '../filters/index.js';
import { indexUses, type RowIndexes } from '../rows/index.js';
import { deadlineWhere, filterColumns, loadBaseContext, matchingRows, type MatchRead, type MetaTable } from '../notifications/index.js';
import { claimDeadlines, pruneAutomationMarks, releaseDeadlines } from './marks.repository.js';
import type { AutomationInvalidation } from './invalidation.js';
import type { ActionOutcome } from './model.js';
import { checkAutomation } from './rule-check.js';
import { claimPeriod, countTriggers, dueAutomationIds, findAutomation, toAutomation } from './rules.repository.js';
import { insertRuns, type NewRun } from './runs.repository.js';
import { nextPeriodicRun } from './schedule.js';

export interface PeriodicOptions {
  timeZone: string;
  /** Rows one period of a "periodic with condition" rule acts on at most (the rest are logged as skipped). */
  maxRows: number;
  log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  /** Row indexes: the filtered columns of a big table get one, and pages are read through it (as deadline reminders do). */
  rowIndexes?: RowIndexes;
}

const PAGE = 500;
/** near_deadline marks are kept this long (a deadline up to the longest alarm window ahead, then past). */
const MARK_RETENTION_MS = 3660 * 86_400_000;

/**
 * The scheduler tick for periodic rules. A due rule's period is claimed by moving `next_run_at` on
 * with a compare-and-set in the same transaction that queues its runs, so with several instances
 * (and even without the scheduler's lease) each period is queued exactly once. `run_periodically`
 * queues one run without a row; `run_periodically_by_condition` one run per matching row of the view,
 * read in pages of 500 through the filter engine's SQL (keyset on the row id), through a row index of a
 * filtered column when the table is big and the filter narrows it (so a period costs what its matching rows
 * cost, not a scan of the table).
 */
export class PeriodicAutomations {
  constructor(
    private readonly db: Db,
    private readonly dialect: DialectName,
    private readonly clock: Clock,
    private readonly invalidation: AutomationInvalidation,
    private readonly options: PeriodicOptions,
    private readonly onQueued: () => void,
  ) {}

  async run(now: number = this.clock.now()): Promise<{ rules: number; runs: number }> {
    const report = { rules: 0, runs: 0 };
    const attempted = new Set<number>();
    for (;;) {
      const ids = (await dueAutomationIds(this.db, now, 100)).filter((id) => !attempted.has(id));
      if (ids.length === 0) break;
      for (const id of ids) {
        attempted.add(id);
        try {
          const queued = await this.queue(id, now);
          if (queued !== null) {
            report.rules++;
            report.runs += queued;
          }
        } catch (error) {
          this.options.log.error({ err: error, ruleId: id }, 'periodic automation failed');
        }
      }
    }
    if (report.runs > 0) this.onQueued();
    await pruneAutomationMarks(this.db, now - MARK_RETENTION_MS);
    return report;
  }

  private queue(id: number, now: number): Promise<number | null> {
    return this.db.transaction().execute(async (trx) => {
      const listing = await findAutomation(trx, id);
      if (!listing || listing.next_run_at === null) return null;
      const rule = toAutomation(listing);
      const next = nextPeriodicRun(now, rule.runCondition, rule.trigger, this.options.timeZone);
      if (!(await claimPeriod(trx, id, Number(listing.next_run_at), next ?? Number.MAX_SAFE_INTEGER, now))) return null;
      const context = await loadBaseContext(trx, rule.baseId);
      const check = checkAutomation(rule, context.doc, context.members);
      if (!check.ok) {
        await this.invalidation.invalidate(trx, rule, check.reason);
        return null;
      }
      const outcomes = JSON.stringify(rule.actions.map((a): ActionOutcome => ({ _id: a._id, type: a.type, status: 'pending' })));
      const run = (rowIds: string[], row: string | null): NewRun => ({
        rule_id: rule.id,
        base_id: rule.baseId,
        trigger: rule.trigger.condition,
        row_ids: JSON.stringify(rowIds),
        row,
        depth: 0,
        status: 'pending',
        outcomes,
        error: null,
        next_attempt_at: now,
        created_at: now,
      });
      let queued = 0;
      if (rule.trigger.condition === 'run_periodically') {
        await insertRuns(trx, [run([], null)]);
        queued = 1;
      } else if (rule.trigger.condition === 'near_deadline') {
        // The notification module's deadline window (one deadline scan); a row fires once per deadline.
        const p = check.prepared.engine;
        if (p.viewFilterBroken) return 0;
        const creator = [...context.members.entries()].find(([, m]) => m.userId === rule.creatorId)?.[0];
        const window = deadlineWhere(p, { now, timeZone: this.options.timeZone, currentUser: creator }, this.dialect);
        if (!window.ok) {
          await this.invalidation.invalidate(trx, rule, `its view filters no longer fit: ${window.error}`);
          return null;
        }
        const dateKey = p.dateColumn!.key;
        const read = await this.readFor(trx, rule.baseId, check.prepared.table, window.filter, { now, timeZone: this.options.timeZone, currentUser: creator });
        for await (const page of matchingRows(trx, rule.baseId, rule.trigger.table_id, window.where, PAGE, read)) {
          const marks = page.map(({ row }) => ({ rowId: row._id, mark: String(row.data[dateKey] ?? '').slice(0, 64) }));
          const claimed = await claimDeadlines(trx, rule.id, marks, now);
          const fresh = page.filter(({ row }) => claimed.has(row._id));
          // Rows past the limit keep no mark: they fire at the next run.
          const over = fresh.splice(this.options.maxRows - queued);
          await releaseDeadlines(trx, rule.id, marks.filter((m) => over.some(({ row }) => row._id === m.rowId)));
          await insertRuns(trx, fresh.map(({ row }) => run([row._id], JSON.stringify(row))));
          queued += fresh.length;
          if (queued >= this.options.maxRows) {
            this.options.log.warn({ ruleId: rule.id, maxRows: this.options.maxRows }, 'near_deadline automation: more rows than AUTOMATION_PERIODIC_MAX_ROWS; the rest skipped this period');
            break;
          }
        }
      } else {
        const p = check.prepared;
        const items: unknown[] = [];
        if ((rule.trigger.filters ?? []).length > 0) items.push({ filters: rule.trigger.filters, filter_conjunction: rule.trigger.filter_conjunction ?? 'And' });
        const view = p.engine.view;
        if (Array.isArray(view.filters) && view.filters.length > 0) items.push({ filters: view.filters, filter_conjunction: view.filter_conjunction ?? 'And' });
        const parsed = parseFilters({ filters: items, filter_conjunction: 'And' }, filterColumns(p.table));
        if (!parsed.ok) {
          await this.invalidation.invalidate(trx, rule, `its filters no longer fit: ${parsed.error}`);
          return null;
        }
        const creator = [...context.members.entries()].find(([, m]) => m.userId === rule.creatorId)?.[0];
        const filterCtx = { now, timeZone: this.options.timeZone, currentUser: creator };
        const where: Expression<SqlBool> = filterToSql(parsed.filter, filterCtx, this.dialect);
        const read = await this.readFor(trx, rule.baseId, p.table, parsed.filter, filterCtx);
        for await (const page of matchingRows(trx, rule.baseId, rule.trigger.table_id, where, PAGE, read)) {
          const room = this.options.maxRows - queued;
          const taken = page.slice(0, room);
          await insertRuns(trx, taken.map(({ row }) => run([row._id], JSON.stringify(row))));
          queued += taken.length;
          if (taken.length < page.length) {
            this.options.log.warn({ ruleId: rule.id, maxRows: this.options.maxRows }, 'periodic automation: more matching rows than AUTOMATION_PERIODIC_MAX_ROWS; the rest skipped this period');
            break;
          }
        }
      }
      if (queued > 0) await countTriggers(trx, new Map([[rule.id, 1]]), now);
      return queued;
    });
  }

  /** Asks for row indexes on the filter's columns (built in the background) and answers how to read the matches now: an indexed range, else by id. */
  private async readFor(trx: Executor, baseId: number, table: MetaTable, filter: CompiledFilter, ctx: FilterContext): Promise<MatchRead> {
    const indexes = this.options.rowIndexes;
    if (!indexes) return {};
    indexes.note(baseId, table, indexUses(table, [filter.root], []));
    const terms = indexableTerms(filter, ctx, this.dialect);
    const range = indexes.rangeRead(baseId, table._id, terms);
    return range ? { range } : { indexedBy: await indexes.hint(baseId, table._id, terms, undefined, trx) };
  }
}
