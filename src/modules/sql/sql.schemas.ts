import { Type } from 'typebox';

export const SqlParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });

/**
 * `{"sql", "convert_keys"?, "parameters"?, "server_only"?}` (contract §8.4). Loose on purpose: wrong
 * shapes are answered by the handler in the endpoint's own error body, not the generic one.
 */
export const SqlBody = Type.Object(
  {
    sql: Type.Optional(Type.Unknown()),
    convert_keys: Type.Optional(Type.Unknown()),
    parameters: Type.Optional(Type.Unknown()),
    server_only: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: true },
);

const AnyObject = Type.Object({}, { additionalProperties: true });

export const SqlResponse = Type.Object({
  success: Type.Boolean(),
  error_message: Type.String(),
  is_join_stmt: Type.Boolean(),
  metadata: Type.Array(AnyObject),
  results: Type.Array(AnyObject),
  affected_rows: Type.Optional(Type.Integer()),
});

/** The endpoint's own refusals carry `success`/`error_message`; framework ones (bad JSON) `error_msg`. */
export const SqlErrorResponse = Type.Object({
  success: Type.Optional(Type.Boolean()),
  error_message: Type.Optional(Type.String()),
  error_msg: Type.Optional(Type.String()),
});
export const GatewayError = Type.Object({ error_msg: Type.String() });
