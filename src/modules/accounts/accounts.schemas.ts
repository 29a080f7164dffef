import { Type } from 'typebox';

export const UserRecord = Type.Object({
  email: Type.String({ description: 'The user id (`<32hex>@auth.local`)' }),
  name: Type.String(),
  contact_email: Type.String(),
  is_staff: Type.Boolean(),
  is_active: Type.Boolean(),
  email_notification: Type.Boolean(),
  create_time: Type.String(),
});

/** Loose on purpose: missing fields get DRF-style field errors from the handler, not Ajv's. */
export const AuthTokenBody = Type.Object(
  {
    username: Type.Optional(Type.Unknown()),
    password: Type.Optional(Type.Unknown()),
    platform: Type.Optional(Type.Unknown()),
    device_id: Type.Optional(Type.Unknown()),
    device_name: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

export const AuthTokenResponse = Type.Object({ token: Type.String() });

export const UpdateUserBody = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 255 })),
  email_notification: Type.Optional(Type.Boolean()),
});

export const CreateUserBody = Type.Object({
  email: Type.String({ maxLength: 255 }),
  password: Type.String({ maxLength: 256 }),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  is_staff: Type.Optional(Type.Boolean()),
});

export const UserListResponse = Type.Object({ data: Type.Array(UserRecord), total_count: Type.Integer() });
export const PageQuery = Type.Object({ page: Type.Optional(Type.String()), per_page: Type.Optional(Type.String()) });
export const Success = Type.Object({ success: Type.Boolean() });

export const ChangePasswordBody = Type.Object({
  old_password: Type.String({ maxLength: 256 }),
  new_password: Type.String({ maxLength: 256 }),
});

/** The subset of the original's admin "Update User" this server keeps; other fields are ignored. */
export const AdminUpdateUserBody = Type.Object(
  {
    password: Type.Optional(Type.String({ maxLength: 256 })),
    name: Type.Optional(Type.String({ maxLength: 255 })),
    is_staff: Type.Optional(Type.Boolean()),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
