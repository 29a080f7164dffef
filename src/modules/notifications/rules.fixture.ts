import type { Rule, RuleAction, RuleTrigger } from './rules.model.js';

/** Defaults a test file gives every rule it builds. */
export interface RuleDefaults {
  rule?: Partial<Rule>;
  trigger?: Partial<RuleTrigger>;
  action?: Partial<RuleAction>;
}

/**
 * A builder of valid `per_update` rules (`per_day` for near_deadline) for unit tests: the file's
 * defaults, then each call's trigger, action and other fields on top.
 */
export function ruleBuilder(defaults: RuleDefaults = {}) {
  return (trigger: Partial<RuleTrigger> = {}, action: Partial<RuleAction> = {}, extra: Partial<Rule> = {}): Rule => {
    const mergedTrigger = { rule_name: 'R', table_id: 'T1', view_id: 'v1', condition: 'rows_modified', ...defaults.trigger, ...trigger } as RuleTrigger;
    return {
      id: 1,
      baseId: 1,
      dtableUuid: 'u',
      runCondition: mergedTrigger.condition === 'near_deadline' ? 'per_day' : 'per_update',
      trigger: mergedTrigger,
      action: { type: 'notify', users: [], default_msg: '', ...defaults.action, ...action },
      creatorId: 1,
      ctime: 0,
      lastTriggerTime: null,
      isValid: true,
      invalidReason: null,
      nextRunAt: null,
      ...defaults.rule,
      ...extra,
    };
  };
}
