import { Type } from 'typebox';

export const AccessTokenRecord = Type.Object({
  access_token: Type.String(),
  dtable_uuid: Type.String(),
  dtable_server: Type.String(),
  dtable_socket: Type.String(),
  dtable_db: Type.String(),
  workspace_id: Type.Integer(),
  dtable_name: Type.String(),
  app_name: Type.Optional(Type.String()),
  use_api_gateway: Type.Boolean(),
});

export const ApiTokenRecord = Type.Object({
  app_name: Type.String(),
  /** The token itself only in the creation response; lists show it masked. */
  api_token: Type.String(),
  generated_by: Type.String(),
  generated_at: Type.String(),
  last_access: Type.String(),
  permission: Type.String(),
  tables: Type.Optional(Type.Array(Type.String())),
  operations: Type.Optional(Type.Array(Type.String())),
  allowed_networks: Type.Optional(Type.Array(Type.String())),
  expires_at: Type.Optional(Type.String()),
  rate_limit: Type.Optional(Type.Integer()),
  previous_expires_at: Type.Optional(Type.String()),
  last_client_ip: Type.Optional(Type.String()),
  requests_per_day: Type.Optional(Type.Array(Type.Object({ day: Type.String(), requests: Type.Integer() }))),
});

export const ApiTokenList = Type.Object({ api_tokens: Type.Array(ApiTokenRecord) });
export const TempApiTokenResponse = Type.Object({ api_token: Type.String() });
export const Success = Type.Object({ success: Type.Boolean() });

/** Fields are checked by the service so JSON, form and multipart bodies behave alike. */
export const LooseBody = Type.Record(Type.String(), Type.Unknown());

export const BaseParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
});
export const ApiTokenParams = Type.Object({
  workspace_id: Type.String({ maxLength: 20 }),
  base_name: Type.String({ maxLength: 1024 }),
  app_name: Type.String({ maxLength: 1024 }),
});
export const ExternalLinkParams = Type.Object({ external_link_token: Type.String({ maxLength: 2048 }) });
export const ExternalLinkQuery = Type.Object({ password: Type.Optional(Type.String({ maxLength: 1024 })) });

export const LooseQuery = Type.Record(Type.String(), Type.Unknown());
