import type { Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { loadBaseContext, writeNotices } from '../notifications/index.js';
import { MSG_TYPE_AUTOMATION_INVALID, type AutomationRule } from './model.js';
import { checkAutomation } from './rule-check.js';
import { markAutomationInvalid, toAutomation, validAutomationsOfBase } from './rules.repository.js';

type Log = { error(obj: object, msg: string): void };

/**
 * Invalid automations: marked `is_valid = 0` with the reason, and the creator is told (the original
 * sends `auto_rule_invalid`). Checked at evaluation and after every structure change of the base.
 */
export class AutomationInvalidation {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly emailDelayMs: number,
    private readonly log: Log,
  ) {}

  async invalidate(trx: Executor, rule: AutomationRule, reason: string): Promise<boolean> {
    if (!(await markAutomationInvalid(trx, rule.id, reason))) return false;
    const name = rule.trigger.rule_name;
    await writeNotices(
      trx,
      [
        {
          userId: rule.creatorId,
          baseId: rule.baseId,
          dtableUuid: rule.dtableUuid,
          msgType: MSG_TYPE_AUTOMATION_INVALID,
          detail: { rule_id: rule.id, rule_name: name, table_id: rule.trigger.table_id, reason, msg: `Automation rule "${name}" stopped working: ${reason}.` },
        },
      ],
      this.clock.now(),
      this.emailDelayMs,
    );
    return true;
  }

  async recheckBase(baseId: number): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const rows = await validAutomationsOfBase(trx, baseId);
      if (rows.length === 0) return 0;
      const context = await loadBaseContext(trx, baseId);
      let count = 0;
      for (const row of rows) {
        const rule = toAutomation(row);
        const check = checkAutomation(rule, context.doc, context.members);
        if (!check.ok && (await this.invalidate(trx, rule, check.reason))) count++;
      }
      return count;
    });
  }

  /** For hooks that must not fail (the structure-change hook): errors go to the log. */
  async recheckBaseSafely(baseId: number): Promise<void> {
    try {
      await this.recheckBase(baseId);
    } catch (error) {
      this.log.error({ err: error, baseId }, 'automation rule re-check failed');
    }
  }
}
