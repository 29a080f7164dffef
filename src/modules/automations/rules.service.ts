import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { apiError, notFound } from '../../shared/errors.js';
import { parsePage } from '../../shared/pagination.js';
import { parsePositiveId } from '../../shared/ids.js';
import type { AccountUser } from '../accounts/index.js';
import { REQUIRED, type BaseAccess } from '../access/index.js';
import { outboxPosition } from '../events/index.js';
import { ADMIN_MAX_PER_PAGE, loadBaseContext, RuleAdmin } from '../notifications/index.js';
import { automationRecord, runRecord } from './present.js';
import * as repo from './rules.repository.js';
import * as runs from './runs.repository.js';
import { nextPeriodicRun } from './schedule.js';
import { sealSecrets } from './secrets.js';
import type { SecretBox } from '../webhooks/index.js';
import { checkAutomationShape, validateAutomation, type ValidAutomation } from './validation.js';

export interface AutomationTarget {
  workspaceId: string;
  baseName: string;
}

export interface AutomationSettings {
  timeZone: string;
  /** AUTOMATION_RULES_PER_BASE */
  maxRulesPerBase: number;
}

/** Automation rule CRUD for base users, the run log, and the system admin's operations. */
export class AutomationRulesService {
  private readonly admin: RuleAdmin<'automation_rules', ReturnType<typeof automationRecord>>;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly settings: AutomationSettings,
    private readonly secrets: SecretBox,
  ) {
    this.admin = new RuleAdmin(db, 'automation_rules', automationRecord, { badId: 'automation_rule_id invalid.', notFound: (rid) => `automation_rule ${rid} not found.` });
  }

  async list(user: AccountUser, target: AutomationTarget) {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.read);
    return (await repo.listBaseAutomations(this.db, base.id)).map(automationRecord);
  }

  async create(user: AccountUser, target: AutomationTarget, body: unknown) {
    const shape = checkAutomationShape(body);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.write);
    if ((await repo.countBaseAutomations(this.db, base.id)) >= this.settings.maxRulesPerBase) {
      throw apiError(403, `This base has reached its limit of ${this.settings.maxRulesPerBase} automation rules.`);
    }
    const context = await loadBaseContext(this.db, base.id);
    const valid = validateAutomation(shape, context.doc, context.members);
    valid.actions = sealSecrets(this.secrets, valid.actions);
    const now = this.clock.now();
    const id = await repo.insertAutomation(this.db, {
      ...this.columnsOf(valid, now),
      base_id: base.id,
      dtable_uuid: base.uuid,
      creator_id: user.id,
      ctime: now,
      last_trigger_time: null,
      invalid_reason: null,
      // Read in the INSERT itself: the rule sees exactly the changes committed after it.
      start_event_id: outboxPosition(this.db),
    });
    return automationRecord((await repo.findAutomation(this.db, id))!);
  }

  /** Re-validates; a valid PUT re-activates an invalid rule. */
  async update(user: AccountUser, target: AutomationTarget, ruleId: string, body: unknown) {
    const shape = checkAutomationShape(body);
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.write);
    const existing = await this.ruleOfBase(base.id, ruleId);
    if (!existing) throw notFound(`automation_rule ${ruleId} not found.`);
    const context = await loadBaseContext(this.db, base.id);
    const valid = validateAutomation(shape, context.doc, context.members);
    valid.actions = sealSecrets(this.secrets, valid.actions, repo.toAutomation(existing).actions);
    await repo.updateAutomation(this.db, Number(existing.id), { ...this.columnsOf(valid, this.clock.now()), is_valid: 1, invalid_reason: null });
    return automationRecord((await repo.findAutomation(this.db, Number(existing.id)))!);
  }

  async remove(user: AccountUser, target: AutomationTarget, ruleId: string): Promise<void> {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.write);
    const existing = await this.ruleOfBase(base.id, ruleId);
    if (!existing) throw notFound(`automation_rule ${ruleId} not found.`);
    await repo.deleteAutomation(this.db, Number(existing.id));
  }

  /** The run log of one rule, newest first. */
  async runs(user: AccountUser, target: AutomationTarget, ruleId: string, query: { page?: unknown; per_page?: unknown }) {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.read);
    const existing = await this.ruleOfBase(base.id, ruleId);
    if (!existing) throw notFound(`automation_rule ${ruleId} not found.`);
    const page = parsePage(query, { page: 1, perPage: 25 }, ADMIN_MAX_PER_PAGE);
    const id = Number(existing.id);
    const [rows, count] = await Promise.all([runs.listRuleRuns(this.db, id, page.offset, page.perPage), runs.countRuleRuns(this.db, id)]);
    return { run_list: rows.map(runRecord), count };
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
    const row = await repo.findAutomation(this.db, id);
    return row && Number(row.base_id) === baseId ? row : undefined;
  }

  private columnsOf(valid: ValidAutomation, now: number) {
    return {
      table_id: valid.trigger.table_id,
      run_condition: valid.runCondition,
      condition: valid.trigger.condition,
      trigger: JSON.stringify(valid.trigger),
      actions: JSON.stringify(valid.actions),
      updated_at: now,
      next_run_at: nextPeriodicRun(now, valid.runCondition, valid.trigger, this.settings.timeZone),
    };
  }
}
