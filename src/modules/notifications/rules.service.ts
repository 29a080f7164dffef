import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { notFound } from '../../shared/errors.js';
import type { AccountUser } from '../accounts/index.js';
import { REQUIRED, type BaseAccess } from '../access/index.js';
import { outboxPosition } from '../events/index.js';
import { loadBaseContext } from './base-context.js';
import { ruleRecord } from './present.js';
import { RuleAdmin } from './rule-admin.js';
import type { NewRuleRow } from './rules.repository.js';
import * as repo from './rules.repository.js';
import { checkRuleShape, validateRule, type ValidRule } from './rules.validation.js';
import { DEFAULT_NOTIFY_HOUR } from './rules.model.js';
import { nextRunAt } from './zoned-time.js';
import { parsePositiveId } from '../../shared/ids.js';

export interface RuleTarget {
  workspaceId: string;
  baseName: string;
}

/** Rule CRUD for base users, and the system admin's rule operations. */
export class NotificationRulesService {
  private readonly admin: RuleAdmin<'notification_rules', ReturnType<typeof ruleRecord>>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly timeZone: string,
  ) {
    this.admin = new RuleAdmin(db, 'notification_rules', ruleRecord, { badId: 'rid invalid.', notFound: (rid) => `notification ${rid} not found.` });
  }

  async list(user: AccountUser, target: RuleTarget) {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.read);
    return (await repo.listBaseRules(this.db, base.id)).map(ruleRecord);
  }

  async create(user: AccountUser, target: RuleTarget, body: unknown) {
    const shape = checkRuleShape(body);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.write);
    const context = await loadBaseContext(this.db, base.id);
    const valid = validateRule(shape, context.doc, context.members);
    const now = this.clock.now();
    const row: NewRuleRow = {
      ...this.columnsOf(valid, now),
      meta_version: context.version,
      base_id: base.id,
      dtable_uuid: base.uuid,
      creator_id: user.id,
      ctime: now,
      last_trigger_time: null,
      invalid_reason: null,
    };
    // The outbox position is read in the INSERT itself: the rule sees exactly the changes committed after it.
    const id = await repo.insertRule(this.db, { ...row, start_event_id: outboxPosition(this.db) });
    return ruleRecord((await repo.findRule(this.db, id))!);
  }

  /** Re-validates; a valid PUT re-activates an invalid rule. */
  async update(user: AccountUser, target: RuleTarget, ruleId: string, body: unknown) {
    const shape = checkRuleShape(body);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.write);
    const existing = await this.ruleOfBase(base.id, ruleId);
    if (!existing) throw notFound(`notification_rule ${ruleId} not found.`);
    const context = await loadBaseContext(this.db, base.id);
    const valid = validateRule(shape, context.doc, context.members);
    const before = repo.toRule(existing);
    const now = this.clock.now();
    // As the original: a periodic rule whose schedule changed starts afresh.
    const scheduleChanged =
      valid.runCondition !== before.runCondition ||
      (valid.runCondition === 'per_day' && valid.trigger.notify_hour !== before.trigger.notify_hour);
    await repo.updateRule(this.db, existing.id, {
      ...this.columnsOf(valid, now),
      meta_version: context.version,
      is_valid: 1,
      invalid_reason: null,
      ...(scheduleChanged ? { last_trigger_time: null } : {}),
    });
    return ruleRecord((await repo.findRule(this.db, existing.id))!);
  }

  async remove(user: AccountUser, target: RuleTarget, ruleId: string): Promise<void> {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.write);
    const existing = await this.ruleOfBase(base.id, ruleId);
    if (!existing) throw notFound('Not found.');
    await repo.deleteRule(this.db, existing.id);
  }

  adminList(query: { page?: unknown; per_page?: unknown }, onlyInvalid: boolean) {
    return this.admin.list(query, onlyInvalid);
  }

  adminDelete(rid: string): Promise<void> {
    return this.admin.delete(rid);
  }

  adminDeleteInvalid(): Promise<number> {
    return this.admin.deleteInvalid();
  }

  private async ruleOfBase(baseId: number, ruleId: string) {
    const id = parsePositiveId(ruleId);
    if (id === null) return undefined;
    const row = await repo.findRule(this.db, id);
    return row && Number(row.base_id) === baseId ? row : undefined;
  }

  private columnsOf(valid: ValidRule, now: number) {
    const hour = valid.trigger.notify_hour ?? DEFAULT_NOTIFY_HOUR;
    return {
      table_id: valid.trigger.table_id,
      run_condition: valid.runCondition,
      condition: valid.trigger.condition,
      trigger: JSON.stringify(valid.trigger),
      action: JSON.stringify(valid.action),
      updated_at: now,
      next_run_at: valid.runCondition === 'per_day' ? nextRunAt(now, hour, this.timeZone) : null,
    };
  }
}
