import { Type } from 'typebox';
import { MAX_CURSOR_LENGTH } from './listing-cursor.js';

/** The Base-Token's base; the auth hook checks it against the token. */
export const BaseUuidParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
export const RowParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }), row_id: Type.String({ maxLength: 64 }) });
export const ViewParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }), view_name: Type.String({ maxLength: 1024 }) });

const Name = Type.String({ maxLength: 1024 });

/** Table by name or id (the contract allows either everywhere). */
export const TableQuery = Type.Object({
  table_name: Type.Optional(Name),
  table_id: Type.Optional(Name),
  view_name: Type.Optional(Name),
  view_id: Type.Optional(Name),
});

export const ListRowsQuery = Type.Object({
  table_name: Type.Optional(Name),
  table_id: Type.Optional(Name),
  view_name: Type.Optional(Name),
  view_id: Type.Optional(Name),
  start: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 })),
  limit: Type.Optional(Type.Integer({ minimum: 1 })),
  convert_keys: Type.Optional(Type.String({ maxLength: 10 })),
  convert_link_id: Type.Optional(Type.String({ maxLength: 10 })),
  order_by: Type.Optional(Name),
  direction: Type.Optional(Type.String({ maxLength: 10 })),
  /** A page's `next_cursor` (a basegate addition, rows/listing-cursor.ts). */
  cursor: Type.Optional(Type.String({ maxLength: MAX_CURSOR_LENGTH })),
});

export const GetRowQuery = Type.Object({
  table_name: Type.Optional(Name),
  table_id: Type.Optional(Name),
  convert_keys: Type.Optional(Type.String({ maxLength: 10 })),
  convert_link_id: Type.Optional(Type.String({ maxLength: 10 })),
});

/** Bodies are checked field by field in the services (clear messages, limits named); only the shape is fixed here. */
export const AnyBody = Type.Record(Type.String(), Type.Unknown());

export const AnyObject = Type.Object({}, { additionalProperties: true });

/** `next_cursor` only when more rows follow the page (a basegate addition: docs/compatibility.md). */
export const RowsResponse = Type.Object({ rows: Type.Array(AnyObject), next_cursor: Type.Optional(Type.String()) });

export const AppendResponse = Type.Object({
  inserted_row_count: Type.Integer(),
  row_ids: Type.Array(Type.Object({ _id: Type.String() })),
  first_row: Type.Union([AnyObject, Type.Null()]),
});

export const Success = Type.Object({ success: Type.Boolean() });
export const DeleteRowsResponse = Type.Object({ success: Type.Boolean(), deleted_rows: Type.Integer() });
export const DeleteLinksResponse = Type.Object({ success: Type.Boolean(), deleted_links_count: Type.Optional(Type.Integer()) });

export const MetadataResponse = Type.Object({ metadata: AnyObject });
export const ColumnsResponse = Type.Object({ columns: Type.Array(AnyObject) });
export const ViewsResponse = Type.Object({ views: Type.Array(AnyObject) });

export const QueryLinksResponse = Type.Record(Type.String(), Type.Array(Type.Object({ row_id: Type.String(), display_value: Type.String() })));

export const GoneResponse = Type.Object({ error_msg: Type.String() });
