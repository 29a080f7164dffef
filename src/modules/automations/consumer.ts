import type { Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { BatchContext, ChangeEvent, OpType, OutboxConsumer } from '../events/index.js';
import { loadBaseContexts, triggerMatch } from '../notifications/index.js';
import type { AutomationInvalidation } from './invalidation.js';
import { automationSource, type ActionOutcome } from './model.js';
import { checkAutomation, type PreparedAutomation } from './rule-check.js';
import { basesWithUpdateAutomations, countTriggers, toAutomation, updateAutomationsOfTables } from './rules.repository.js';
import { countBaseRunsSince, insertRuns, type NewRun } from './runs.repository.js';

const RELEVANT: ReadonlySet<OpType> = new Set<OpType>(['insert_row', 'modify_row', 'add_link']);

export interface ConsumerSettings {
  timeZone: string;
  /** AUTOMATION_RUNS_PER_MINUTE: runs a base may start per minute; later triggers are logged and dropped. */
  runsPerMinute: number;
  /** AUTOMATION_MAX_DEPTH: how many automation writes may follow one another before the chain is cut. */
  maxDepth: number;
}

type Log = { warn(obj: object, msg: string): void };

/**
 * Feeds committed changes to the per_update automations of the changed tables. It only decides and
 * queues: each firing becomes a pending `automation_runs` row in the dispatcher's transaction; the
 * runner performs the actions after that commit (never inside the request that wrote the row).
 */
export class AutomationConsumer implements OutboxConsumer {
  readonly name = 'automation-rules';

  constructor(
    private readonly clock: Clock,
    private readonly invalidation: AutomationInvalidation,
    private readonly settings: ConsumerSettings,
    private readonly log: Log,
    /** Called after the batch's commit: wake the runner. */
    private readonly onQueued: () => void,
  ) {}

  basesOfInterest(trx: Executor, baseIds: number[]): Promise<number[]> {
    return basesWithUpdateAutomations(trx, baseIds);
  }

  async handle(trx: Executor, events: ChangeEvent[], context?: BatchContext): Promise<void> {
    const relevant = events.filter((e) => RELEVANT.has(e.opType));
    if (relevant.length === 0) return;
    const tables = new Map<string, { baseId: number; tableId: string }>();
    for (const e of relevant) tables.set(`${e.baseId}:${e.tableId}`, { baseId: e.baseId, tableId: e.tableId });
    const rows = await updateAutomationsOfTables(trx, [...tables.values()]);
    if (rows.length === 0) return;

    const contexts = await loadBaseContexts(trx, rows.map((r) => Number(r.base_id)));
    const byTable = new Map<string, PreparedAutomation[]>();
    const startOf = new Map(rows.map((r) => [Number(r.id), Number(r.start_event_id)]));
    for (const row of rows) {
      const rule = toAutomation(row);
      const ctx = contexts.get(rule.baseId)!;
      const check = checkAutomation(rule, ctx.doc, ctx.members);
      if (!check.ok) {
        await this.invalidation.invalidate(trx, rule, check.reason);
        continue;
      }
      const key = `${rule.baseId}:${rule.trigger.table_id}`;
      byTable.set(key, [...(byTable.get(key) ?? []), check.prepared]);
    }

    const now = this.clock.now();
    const budget = new Map<number, number>();
    const runs: NewRun[] = [];
    const counts = new Map<number, number>();
    for (const event of relevant) {
      const prepared = byTable.get(`${event.baseId}:${event.tableId}`);
      if (!prepared) continue;
      const source = automationSource(event.opApp);
      for (const p of prepared) {
        const rule = p.rule;
        if (event.id <= (startOf.get(rule.id) ?? 0)) continue;
        // Loop protection: a rule's own writes never trigger it again.
        if (source?.ruleId === rule.id) continue;
        const matched = triggerMatch(p.engine, event, this.settings.timeZone);
        if (!matched.fire) continue;
        const depth = (source?.depth ?? 0) + 1;
        const base = { rule_id: rule.id, base_id: rule.baseId, trigger: rule.trigger.condition, row_ids: JSON.stringify([matched.row._id]), depth, created_at: now };
        if (depth > this.settings.maxDepth) {
          const error = `chain stopped: depth ${depth} exceeds AUTOMATION_MAX_DEPTH ${this.settings.maxDepth} (started by rule ${source!.ruleId})`;
          this.log.warn({ ruleId: rule.id, rowId: matched.row._id, depth }, error);
          runs.push({ ...base, row: null, status: 'stopped', outcomes: '[]', error, finished_at: now, next_attempt_at: null });
          continue;
        }
        let left = budget.get(rule.baseId);
        if (left === undefined) left = this.settings.runsPerMinute - (await countBaseRunsSince(trx, rule.baseId, now - 60_000));
        if (left <= 0) {
          const error = `rate limit: the base started ${this.settings.runsPerMinute} runs in the last minute (AUTOMATION_RUNS_PER_MINUTE)`;
          this.log.warn({ ruleId: rule.id, rowId: matched.row._id }, error);
          budget.set(rule.baseId, 0);
          // Recorded, not run: the run log says which trigger was dropped and why.
          runs.push({ ...base, row: null, status: 'skipped', outcomes: '[]', error, finished_at: now, next_attempt_at: null });
          continue;
        }
        budget.set(rule.baseId, left - 1);
        const outcomes: ActionOutcome[] = rule.actions.map((a) => ({ _id: a._id, type: a.type, status: 'pending' }));
        runs.push({ ...base, row: JSON.stringify(matched.row), status: 'pending', outcomes: JSON.stringify(outcomes), error: null, next_attempt_at: now });
        counts.set(rule.id, (counts.get(rule.id) ?? 0) + 1);
      }
    }
    if (runs.length === 0) return;
    await insertRuns(trx, runs);
    await countTriggers(trx, counts, now);
    if (counts.size > 0) context?.afterCommit(this.onQueued);
  }
}
