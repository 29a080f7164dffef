import type { Executor } from '../../db/index.js';
import { loadBaseContext, metadataVersion, type BaseContext } from '../notifications/index.js';
import { checkAutomation, type AutomationCheck } from './rule-check.js';
import { findAutomation, toAutomation, type AutomationListing } from './rules.repository.js';
import type { AutomationRule } from './model.js';

export type CachedRule = { listing: AutomationListing; rule: AutomationRule; context: BaseContext; check: AutomationCheck };

/**
 * What the runs of ONE batch of the runner share: each rule is read once, each base's context (metadata
 * document and members) loaded once per structure version, and each rule checked once against it.
 * Before every run the base's metadata version is read again (one small query), so a table or column
 * deleted during the batch is seen by the next run. The version, not the revision: a run's own row
 * writes bump the revision but leave the structure as it is, and would otherwise empty the cache.
 * A rule edited, or a member removed, during a batch is seen from the next batch on (at most BATCH runs).
 */
export class RunBatchCache {
  private readonly rules = new Map<number, { listing: AutomationListing; rule: AutomationRule } | null>();
  private readonly contexts = new Map<number, BaseContext>();
  private readonly checks = new Map<number, { version: number; check: AutomationCheck }>();

  constructor(private readonly db: Executor) {}

  /** The rule of a run, checked against its base as it is now; null when the rule is gone or invalid. */
  async rule(ruleId: number): Promise<CachedRule | null> {
    let read = this.rules.get(ruleId);
    if (read === undefined) {
      const listing = await findAutomation(this.db, ruleId);
      read = listing && Number(listing.is_valid) === 1 ? { listing, rule: toAutomation(listing) } : null;
      this.rules.set(ruleId, read);
    }
    if (!read) return null;
    const { listing, rule } = read;
    const context = await this.context(rule.baseId);
    const kept = this.checks.get(ruleId);
    if (kept && kept.version === context.version) return { listing, rule, context, check: kept.check };
    const check = checkAutomation(rule, context.doc, context.members);
    this.checks.set(ruleId, { version: context.version, check });
    return { listing, rule, context, check };
  }

  /** After the rule was marked invalid: later runs of this batch see it as such. */
  forget(ruleId: number): void {
    this.rules.set(ruleId, null);
  }

  private async context(baseId: number): Promise<BaseContext> {
    const kept = this.contexts.get(baseId);
    if (kept && kept.version === (await metadataVersion(this.db, baseId))) return kept;
    const context = await loadBaseContext(this.db, baseId);
    this.contexts.set(baseId, context);
    return context;
  }
}
