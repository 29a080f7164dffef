import type { Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { ChangeEvent, OpType, OutboxConsumer } from '../events/index.js';
import { loadBaseContexts, nameLookup } from './base-context.js';
import { evaluate, type EngineContext } from './engine.js';
import type { RuleInvalidation } from './invalidation.js';
import { claimUpdateWindows, type WindowClaim } from './marks.repository.js';
import { writeNotices, type Notice } from './notify.js';
import { prepareRule, type PreparedRule } from './rule-check.js';
import { MSG_TYPE_RULE } from './rules.model.js';
import { basesWithUpdateRules, setLastTriggerTime, toRule, updateRulesOfTables } from './rules.repository.js';

const RELEVANT: ReadonlySet<OpType> = new Set<OpType>(['insert_row', 'modify_row', 'add_link', 'remove_link']);

export interface RuleConsumerOptions {
  timeZone: string;
  /** NOTIFICATION_DEDUP_MINUTES in ms; 0 turns de-duplication off. */
  dedupWindowMs: number;
  emailDelayMs: number;
}

/**
 * Feeds committed change events to the per_update rules of the changed tables. The cost of a batch is
 * one indexed lookup of the rules of the tables it touches, plus, only for bases that have such rules,
 * their metadata and members; rules of other tables and bases are never read.
 */
export class RuleEventConsumer implements OutboxConsumer {
  readonly name = 'notification-rules';

  constructor(
    private readonly clock: Clock,
    private readonly invalidation: RuleInvalidation,
    private readonly settings: RuleConsumerOptions,
  ) {}

  basesOfInterest(trx: Executor, baseIds: number[]): Promise<number[]> {
    return basesWithUpdateRules(trx, baseIds);
  }

  async handle(trx: Executor, events: ChangeEvent[]): Promise<void> {
    const relevant = events.filter((e) => RELEVANT.has(e.opType));
    if (relevant.length === 0) return;
    const tables = new Map<string, { baseId: number; tableId: string }>();
    for (const e of relevant) tables.set(`${e.baseId}:${e.tableId}`, { baseId: e.baseId, tableId: e.tableId });
    const rows = await updateRulesOfTables(trx, [...tables.values()]);
    if (rows.length === 0) return;

    const contexts = await loadBaseContexts(trx, rows.map((r) => Number(r.base_id)));
    const byTable = new Map<string, PreparedRule[]>();
    // A rule sees exactly the changes committed after it was created.
    const startOf = new Map(rows.map((r) => [Number(r.id), Number(r.start_event_id)]));
    for (const row of rows) {
      const rule = toRule(row);
      const context = contexts.get(rule.baseId)!;
      const check = prepareRule(rule, context.doc, context.members);
      if (!check.ok) {
        await this.invalidation.invalidate(trx, rule, check.reason);
        continue;
      }
      const key = `${rule.baseId}:${rule.trigger.table_id}`;
      byTable.set(key, [...(byTable.get(key) ?? []), check.prepared]);
    }

    const fired: Array<{ claim: WindowClaim; rule: PreparedRule['rule']; recipients: number[]; detail: object }> = [];
    for (const event of relevant) {
      const prepared = byTable.get(`${event.baseId}:${event.tableId}`);
      if (!prepared) continue;
      const members = contexts.get(event.baseId)!.members;
      const ctx: EngineContext = { members, timeZone: this.settings.timeZone, userName: nameLookup(members) };
      for (const p of prepared) {
        if (event.id <= (startOf.get(p.rule.id) ?? 0)) continue;
        const decision = evaluate(p, event, ctx);
        if (!decision.fire) continue;
        const claim = { ruleId: p.rule.id, rowId: decision.rowId, at: event.opTime };
        fired.push({ claim, rule: p.rule, recipients: decision.recipients, detail: decision.detail });
      }
    }
    // Per rule AND row: changes to other rows are never swallowed (the original throttles the whole rule).
    const granted = await claimUpdateWindows(trx, fired.map((f) => f.claim), this.settings.dedupWindowMs);
    const notices: Notice[] = [];
    const triggered = new Set<number>();
    fired.forEach((f, i) => {
      if (!granted[i]) return;
      triggered.add(f.rule.id);
      for (const userId of f.recipients) {
        notices.push({ userId, baseId: f.rule.baseId, dtableUuid: f.rule.dtableUuid, msgType: MSG_TYPE_RULE, detail: f.detail });
      }
    });
    const now = this.clock.now();
    await writeNotices(trx, notices, now, this.settings.emailDelayMs);
    await setLastTriggerTime(trx, [...triggered], now);
  }
}
