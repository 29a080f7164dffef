import type { Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { loadBaseContext } from './base-context.js';
import { writeNotices } from './notify.js';
import { prepareRule } from './rule-check.js';
import { MSG_TYPE_RULE_INVALID, type Rule } from './rules.model.js';
import { basesWithStaleRules, markInvalid, setMetaVersion, toRule, validRulesOfBase } from './rules.repository.js';

/**
 * Invalid rules: marked `is_valid = 0` with the reason, and the creator is told which rule and why
 * (the original tells nobody). Detection happens at evaluation time always, and when a base's access
 * changes (`recheckBase`).
 */
export class RuleInvalidation {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly emailDelayMs: number,
    private readonly log?: { error(obj: object, msg: string): void },
  ) {}

  /** Returns true when this call invalidated the rule (false if it already was invalid). */
  async invalidate(trx: Executor, rule: Rule, reason: string): Promise<boolean> {
    if (!(await markInvalid(trx, rule.id, reason))) return false;
    const name = rule.trigger.rule_name;
    await writeNotices(
      trx,
      [
        {
          userId: rule.creatorId,
          baseId: rule.baseId,
          dtableUuid: rule.dtableUuid,
          msgType: MSG_TYPE_RULE_INVALID,
          detail: {
            rule_id: rule.id,
            rule_name: name,
            table_id: rule.trigger.table_id,
            view_id: rule.trigger.view_id,
            condition: rule.trigger.condition,
            reason,
            msg: `Notification rule "${name}" stopped working: ${reason}.`,
          },
        },
      ],
      this.clock.now(),
      this.emailDelayMs,
    );
    return true;
  }

  /** Re-checks every valid rule of a base (after a share or the base's structure changed); returns how many became invalid. */
  async recheckBase(baseId: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await validRulesOfBase(trx, baseId);
      if (rows.length === 0) return 0;
      const context = await loadBaseContext(trx, baseId);
      let count = 0;
      const stillValid: number[] = [];
      for (const row of rows) {
        const rule = toRule(row);
        const check = prepareRule(rule, context.doc, context.members);
        if (check.ok) stillValid.push(rule.id);
        else if (await this.invalidate(trx, rule, check.reason)) count++;
      }
      await setMetaVersion(trx, stillValid, context.version);
      return count;
    });
  }

  /** `recheckBase` for hooks that must not fail: errors go to the log. */
  async recheckBaseSafely(baseId: number): Promise<void> {
    try {
      await this.recheckBase(baseId);
    } catch (error) {
      this.log?.error({ err: error, baseId }, 'notification rule re-check failed');
    }
  }

  /**
   * Re-checks the rules of every base whose structure changed since its rules were last checked
   * (tables, views or columns deleted or retyped). The rows module's structure-change hook does this
   * at once after each change; this sweep, run by the scheduler every few minutes, is the safety net
   * for a process that stopped between the commit and the hook. Evaluation checks again in any case.
   */
  async sweepChangedBases(): Promise<{ bases: number; invalidated: number }> {
    const report = { bases: 0, invalidated: 0 };
    const seen = new Set<number>();
    for (;;) {
      const baseIds = (await basesWithStaleRules(this.db, 100 + seen.size)).filter((id) => !seen.has(id));
      if (baseIds.length === 0) return report;
      for (const baseId of baseIds) {
        seen.add(baseId);
        report.bases++;
        report.invalidated += await this.recheckBase(baseId);
      }
    }
  }
}
