import type { Expression, SqlBool } from 'kysely';
import type { Db, DialectName } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { filterToSql, indexableTerms, parseFilters, type CompiledFilter } from '../filters/index.js';
import { loadBaseContext, nameLookup } from './base-context.js';
import { matchingRows, type MatchRead } from './deadline.repository.js';
import { indexUses, type RowIndexes } from '../rows/index.js';
import { detailFor, recipientsFor } from './engine.js';
import type { RuleInvalidation } from './invalidation.js';
import { claimDay, pruneMarks } from './marks.repository.js';
import { writeNotices, type Notice } from './notify.js';
import { prepareRule, type PreparedRule } from './rule-check.js';
import { DEFAULT_NOTIFY_HOUR, MSG_TYPE_RULE } from './rules.model.js';
import { dueDeadlineRuleIds, lockDueRule, setLastTriggerTime, setNextRunAt, toRule } from './rules.repository.js';
import { filterColumns } from './rules.validation.js';
import { localDay, nextRunAt } from './zoned-time.js';

const RULES_PER_QUERY = 100;
const ROWS_PER_PAGE = 500;
const DAY_MS = 86_400_000;

export interface DeadlineScanOptions {
  /** Row indexes: the scanned table's filtered columns get one when the table is big (rows/row-indexes.ts). */
  rowIndexes?: RowIndexes;
  timeZone: string;
  emailDelayMs: number;
  /** Marks older than this are pruned after each scan (at least two days, for the day marks). */
  markRetentionMs: number;
  log?: { error(obj: object, msg: string): void };
}

export interface DeadlineScanReport {
  rules: number;
  rows: number;
  notifications: number;
}

/**
 * Deadline reminders (`per_day` + `near_deadline`). A rule is due once a day at `notify_hour` in
 * TIME_ZONE (`next_run_at`); a run that was missed (downtime) happens at the next scan, once. The rows
 * of the rule's view whose date lies in [today, today + alarm_days] are selected in SQL compiled by the
 * filter engine and walked page by page; a (rule, row, day) key makes each reminder exactly-once.
 */
export class DeadlineScan {
  constructor(
    private readonly db: Db,
    private readonly dialect: DialectName,
    private readonly clock: Clock,
    private readonly invalidation: RuleInvalidation,
    private readonly options: DeadlineScanOptions,
  ) {}

  async run(now: number = this.clock.now()): Promise<DeadlineScanReport> {
    const report: DeadlineScanReport = { rules: 0, rows: 0, notifications: 0 };
    const attempted = new Set<number>();
    for (;;) {
      const ids = (await dueDeadlineRuleIds(this.db, now, RULES_PER_QUERY)).filter((id) => !attempted.has(id));
      if (ids.length === 0) break;
      for (const id of ids) {
        attempted.add(id);
        try {
          const result = await this.runRule(id, now);
          if (result) {
            report.rules++;
            report.rows += result.rows;
            report.notifications += result.notifications;
          }
        } catch (error) {
          // A failing rule must not stop the others; it stays due and is retried at the next scan.
          this.options.log?.error({ err: error, ruleId: id }, 'deadline rule failed');
        }
      }
    }
    await pruneMarks(this.db, now - Math.max(this.options.markRetentionMs, 2 * DAY_MS));
    return report;
  }

  /** Runs one due rule in its own transaction; null when it was not due (any more) or is invalid. */
  private async runRule(id: number, now: number): Promise<{ rows: number; notifications: number } | null> {
    return this.db.transaction().execute(async (trx) => {
      const row = await lockDueRule(trx, this.dialect, id, now);
      if (!row) return null;
      const rule = toRule(row);
      const context = await loadBaseContext(trx, rule.baseId);
      const check = prepareRule(rule, context.doc, context.members);
      if (!check.ok) {
        await this.invalidation.invalidate(trx, rule, check.reason);
        return null;
      }
      const p = check.prepared;
      await setNextRunAt(trx, rule.id, nextRunAt(now, rule.trigger.notify_hour ?? DEFAULT_NOTIFY_HOUR, this.options.timeZone));
      if (p.viewFilterBroken) return { rows: 0, notifications: 0 };

      const today = localDay(now, this.options.timeZone);
      const creator = [...context.members.entries()].find(([, m]) => m.userId === rule.creatorId)?.[0];
      const window = deadlineWhere(p, { now, timeZone: this.options.timeZone, currentUser: creator }, this.dialect);
      if (!window.ok) {
        await this.invalidation.invalidate(trx, rule, `its view filters no longer fit: ${window.error}`);
        return null;
      }
      const where = window.where;
      const rowIndexes = this.options.rowIndexes;
      rowIndexes?.note(rule.baseId, p.table, indexUses(p.table, [window.filter.root], []));
      const terms = rowIndexes ? indexableTerms(window.filter, { now, timeZone: this.options.timeZone, currentUser: creator }, this.dialect) : [];
      const range = rowIndexes?.rangeRead(rule.baseId, rule.trigger.table_id, terms);
      const read: MatchRead = range ? { range } : { indexedBy: await rowIndexes?.hint(rule.baseId, rule.trigger.table_id, terms, undefined, trx) };
      const templateCtx = { timeZone: this.options.timeZone, userName: nameLookup(context.members) };

      let rows = 0;
      let notifications = 0;
      for await (const page of matchingRows(trx, rule.baseId, rule.trigger.table_id, where, ROWS_PER_PAGE, read)) {
        rows += page.length;
        const claimed = new Set(await claimDay(trx, rule.id, page.map((r) => r.row._id), today, now));
        const notices: Notice[] = [];
        for (const { row: stored } of page) {
          if (!claimed.has(stored._id)) continue;
          const detail = detailFor(p, stored, templateCtx);
          for (const userId of recipientsFor(p, stored, context.members, { now, timeZone: this.options.timeZone })) {
            notices.push({ userId, baseId: rule.baseId, dtableUuid: rule.dtableUuid, msgType: MSG_TYPE_RULE, detail });
          }
        }
        await writeNotices(trx, notices, now, this.options.emailDelayMs);
        notifications += notices.length;
      }
      if (notifications > 0) await setLastTriggerTime(trx, [rule.id], now);
      return { rows, notifications };
    });
  }
}

/**
 * The rows a deadline rule is due for, as SQL compiled by the filter engine: the view's filters AND
 * "date within today … today + alarm_days" in TIME_ZONE, the view as the rule's creator sees it
 * (`include_me` means the creator). Shared by deadline reminders and near_deadline automations.
 */
export function deadlineWhere(
  p: PreparedRule,
  ctx: { now: number; timeZone: string; currentUser?: string },
  dialect: DialectName,
): { ok: true; where: Expression<SqlBool>; filter: CompiledFilter } | { ok: false; error: string } {
  const window = {
    column_key: p.dateColumn!.key,
    filter_predicate: 'is_within',
    filter_term_modifier: 'the_next_numbers_of_days',
    filter_term: p.rule.trigger.alarm_days ?? 0,
  };
  const items: unknown[] = [window];
  if (Array.isArray(p.view.filters) && p.view.filters.length > 0) {
    items.push({ filters: p.view.filters, filter_conjunction: p.view.filter_conjunction ?? 'And' });
  }
  const parsed = parseFilters({ filters: items, filter_conjunction: 'And' }, filterColumns(p.table));
  if (!parsed.ok) return { ok: false, error: parsed.error };
  return { ok: true, where: filterToSql(parsed.filter, ctx, dialect), filter: parsed.filter };
}
