import { Type } from 'typebox';

export const BaseRecord = Type.Object({
  id: Type.Integer(),
  workspace_id: Type.Integer(),
  uuid: Type.String(),
  name: Type.String(),
  creator: Type.String(),
  modifier: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
  color: Type.Null(),
  text_color: Type.Null(),
  icon: Type.Null(),
  is_encrypted: Type.Boolean(),
  in_storage: Type.Boolean(),
});

export const GroupSharedView = Type.Intersect([
  BaseRecord,
  Type.Object({
    view_share_id: Type.Integer(),
    table_id: Type.String(),
    view_id: Type.String(),
    permission: Type.String(),
    shared_name: Type.Union([Type.String(), Type.Null()]),
  }),
]);

export const SharedBaseRecord = Type.Intersect([
  BaseRecord,
  Type.Object({ permission: Type.String(), from_user: Type.String(), from_user_name: Type.String() }),
]);

export const WorkspaceListResponse = Type.Object({
  workspace_list: Type.Array(
    Type.Object({
      id: Type.Union([Type.Integer(), Type.String()]),
      name: Type.String(),
      type: Type.String(),
      owner_name: Type.Optional(Type.String()),
      group_id: Type.Optional(Type.Integer()),
      group_name: Type.Optional(Type.String()),
      group_owner: Type.Optional(Type.String()),
      group_admins: Type.Optional(Type.Array(Type.String())),
      group_member_count: Type.Optional(Type.Integer()),
      table_list: Type.Optional(Type.Array(BaseRecord)),
      shared_table_list: Type.Optional(Type.Array(SharedBaseRecord)),
    }),
  ),
});

/** Bodies of the base endpoints are validated by the services, so form, multipart and JSON behave alike. */
export const LooseBody = Type.Record(Type.String(), Type.Unknown());

export const WorkspaceParams = Type.Object({ workspace_id: Type.String({ maxLength: 20 }) });
export const BaseParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
});
export const LinkParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
  token: Type.String({ maxLength: 200 }),
});

export const BaseResponse = Type.Object({ table: BaseRecord });
export const CopyResponse = Type.Object({ dtable: BaseRecord });
export const Success = Type.Object({ success: Type.Boolean() });

export const ShareListResponse = Type.Object({
  user_list: Type.Array(
    Type.Object({
      email: Type.String(),
      name: Type.String(),
      contact_email: Type.String(),
      avatar_url: Type.String(),
      permission: Type.String(),
    }),
  ),
});

export const ExternalLinkRecord = Type.Object({
  url: Type.String(),
  token: Type.String(),
  is_custom: Type.Boolean(),
  permission: Type.String(),
  is_expired: Type.Boolean(),
  expire_date: Type.String(),
  password_protected: Type.Boolean(),
  create_at: Type.String(),
});

export const ExternalLinkListResponse = Type.Object({ links: Type.Array(ExternalLinkRecord) });
