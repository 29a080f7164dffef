import { Type } from 'typebox';

/** Free-form JSON object (rule trigger/action, notification detail), serialized as is. */
const AnyObject = Type.Object({}, { additionalProperties: true });

/** Bodies are checked by the services, so JSON, form and multipart bodies behave alike. */
export const LooseBody = Type.Record(Type.String(), Type.Unknown());

export const PageQuery = Type.Object({
  page: Type.Optional(Type.String({ maxLength: 32 })),
  per_page: Type.Optional(Type.String({ maxLength: 32 })),
});

export const RulesParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
});
export const RuleParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
  rule_id: Type.String({ maxLength: 40 }),
});
export const AdminRuleParams = Type.Object({ rule_id: Type.String({ maxLength: 40 }) });

export const RuleRecord = Type.Object({
  id: Type.Integer(),
  dtable_uuid: Type.String(),
  run_condition: Type.String(),
  trigger: AnyObject,
  action: AnyObject,
  creator: Type.String(),
  ctime: Type.String(),
  last_trigger_time: Type.String(),
  is_valid: Type.Integer(),
});

export const RuleListResponse = Type.Object({ dtable_notification_rule_list: Type.Array(RuleRecord) });
export const AdminRuleListResponse = Type.Object({ notification_rule_list: Type.Array(RuleRecord), count: Type.Integer() });
export const AdminInvalidRuleListResponse = Type.Object({
  invalid_notification_rule_list: Type.Array(RuleRecord),
  count: Type.Integer(),
});
export const Success = Type.Object({ success: Type.Boolean() });

export const AccountNotice = Type.Object({
  id: Type.Integer(),
  type: Type.String(),
  msg_type: Type.String(),
  dtable_uuid: Type.String(),
  detail: AnyObject,
  time: Type.String(),
  seen: Type.Boolean(),
});
export const AccountNoticeList = Type.Object({
  notification_list: Type.Array(AccountNotice),
  count: Type.Integer(),
  unseen_count: Type.Integer(),
});

export const BaseNotice = Type.Object({
  id: Type.Integer(),
  username: Type.String(),
  dtable_uuid: Type.String(),
  msg_type: Type.String(),
  created_at: Type.String(),
  detail: AnyObject,
  seen: Type.Integer(),
});
export const BaseNoticeList = Type.Object({ notification_list: Type.Array(BaseNotice) });

export const BaseUuidParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
export const BaseNoticeParams = Type.Object({
  base_uuid: Type.String({ maxLength: 64 }),
  notification_id: Type.String({ maxLength: 40 }),
});
