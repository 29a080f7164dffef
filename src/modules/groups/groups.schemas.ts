import { Type } from 'typebox';

/** Bodies are validated by the services, so form, multipart and JSON behave alike. */
export const LooseBody = Type.Record(Type.String(), Type.Unknown());
export const LooseQuery = Type.Record(Type.String(), Type.Unknown());

const Id = Type.String({ maxLength: 20 });
export const GroupParams = Type.Object({ group_id: Id });
export const MemberParams = Type.Object({ group_id: Id, email: Type.String({ maxLength: 255 }) });
export const BaseParams = Type.Object({ workspace_id: Id, base_name: Type.String({ maxLength: 255 }) });
export const GroupShareParams = Type.Object({ workspace_id: Id, base_name: Type.String({ maxLength: 255 }), group_id: Id });
export const ViewShareParams = Type.Object({ workspace_id: Id, base_name: Type.String({ maxLength: 255 }), share_id: Id });
export const ShareIdParams = Type.Object({ share_id: Id });

export const GroupRecord = Type.Object({
  id: Type.Integer(),
  parent_group_id: Type.Integer(),
  name: Type.String(),
  owner: Type.String(),
  created_at: Type.String(),
  avatar_url: Type.String(),
  admins: Type.Array(Type.String()),
  member_count: Type.Integer(),
});

export const AdminGroupRecord = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  owner: Type.String(),
  owner_name: Type.String(),
  created_at: Type.String(),
  quota: Type.Integer(),
  parent_group_id: Type.Integer(),
  size: Type.Integer(),
});

export const MemberRecord = Type.Object({
  group_id: Type.Integer(),
  name: Type.String(),
  email: Type.String(),
  contact_email: Type.String(),
  login_id: Type.String(),
  avatar_url: Type.String(),
  is_admin: Type.Boolean(),
  role: Type.String(),
});

export const BulkResult = Type.Object({
  success: Type.Array(MemberRecord),
  failed: Type.Array(Type.Object({ email: Type.String(), error_msg: Type.String() })),
});

export const Success = Type.Object({ success: Type.Boolean() });

export const GroupShareRecord = Type.Object({ group_id: Type.Integer(), group_name: Type.String(), permission: Type.String() });

export const ViewShareRecord = Type.Object({
  id: Type.Integer(),
  dtable_name: Type.String(),
  workspace_id: Type.Integer(),
  from_user: Type.String(),
  from_user_name: Type.String(),
  to_user: Type.Optional(Type.String()),
  to_user_name: Type.Optional(Type.String()),
  to_group_id: Type.Optional(Type.String()),
  to_group_name: Type.Optional(Type.String()),
  permission: Type.String(),
  table_id: Type.String(),
  view_id: Type.String(),
  shared_name: Type.Union([Type.String(), Type.Null()]),
  color: Type.Null(),
  text_color: Type.Null(),
  icon: Type.Null(),
});
