import { Type } from 'typebox';

export const BaseUuidParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });

/** `per_minute` is checked by the handler so JSON numbers and form strings give the same message. */
export const OverrideBody = Type.Object({ per_minute: Type.Unknown() }, { additionalProperties: true });

export const BaseLimitRecord = Type.Object({
  base_uuid: Type.String(),
  base_name: Type.String(),
  /** The limit in force for base operations on this base; 0 = unlimited. */
  per_minute: Type.Integer(),
  default_per_minute: Type.Integer(),
  overridden: Type.Boolean(),
});

export const LimitsSummary = Type.Object({
  edition: Type.String(),
  store: Type.String(),
  window_seconds: Type.Integer(),
  account_per_minute: Type.Integer(),
  base_per_minute: Type.Integer(),
  auth_token_per_minute: Type.Integer(),
  base_overrides: Type.Array(
    Type.Object({ base_uuid: Type.String(), per_minute: Type.Integer(), updated_at: Type.String() }),
  ),
});

export const Success = Type.Object({ success: Type.Boolean() });
