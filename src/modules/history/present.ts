import type { BaseMetadata } from '../rows/index.js';
import type { LoggedChange, Operation } from './history.types.js';

type Json = Record<string, unknown>;

const linkOp = (c: LoggedChange) => c.o === 'add_link' || c.o === 'remove_link';

/** One row change in the original's operation shape (cells by column key). */
function rowOperation(c: LoggedChange): Json {
  switch (c.o) {
    case 'insert_row':
      return { op_type: 'insert_row', table_id: c.t, row_id: c.r, row_data: { _id: c.r, ...c.a } };
    case 'delete_row':
      return { op_type: 'delete_row', table_id: c.t, row_id: c.r, deleted_row: { _id: c.r, ...c.b } };
    case 'modify_row':
      return { op_type: 'modify_row', table_id: c.t, row_id: c.r, updated: c.a ?? {}, old_row: c.b ?? {} };
    default:
      return { op_type: c.o, table_id: c.t, row_id: c.r, updated: c.a ?? {}, old_row: c.b ?? {} };
  }
}

/** The logged write as the original's `operation` object: one op, a plural op for several rows, or a batch. */
export function operationObject(op: Operation): Json {
  const rows = op.changes.rows;
  const structure = op.changes.structure ?? [];
  const table_id = op.tableId;
  switch (op.opType) {
    case 'insert_rows':
      return { op_type: op.opType, table_id, row_ids: rows.map((c) => c.r), row_datas: rows.map((c) => ({ _id: c.r, ...c.a })) };
    case 'modify_rows':
      return {
        op_type: op.opType,
        table_id,
        row_ids: rows.map((c) => c.r),
        updated: Object.fromEntries(rows.map((c) => [c.r, c.a ?? {}])),
        old_rows: Object.fromEntries(rows.map((c) => [c.r, c.b ?? {}])),
      };
    case 'delete_rows':
      return { op_type: op.opType, table_id, row_ids: rows.map((c) => c.r), deleted_rows: rows.map((c) => ({ _id: c.r, ...c.b })) };
    case 'update_links':
      return {
        op_type: op.opType,
        table_id,
        count: rows.length,
        changes: rows.filter(linkOp).map((c) => ({ table_id: c.t, row_id: c.r, column_key: Object.keys(c.a ?? {})[0], old_value: Object.values(c.b ?? {})[0], value: Object.values(c.a ?? {})[0] })),
      };
    case 'batch':
    case 'structure':
      return { op_type: op.opType, operations: [...structure, ...rows.map(rowOperation)] };
    default:
      return rows.length === 1 ? rowOperation(rows[0]!) : (structure[0] ?? { op_type: op.opType });
  }
}

/** `GET …/operations/`: the original's entries, plus op_type, write_id and the reverted op (ours). */
export function presentOperation(op: Operation): Json {
  return {
    op_id: op.id,
    author: op.opUser,
    app: op.opApp,
    op_time: op.opTime,
    op_type: op.opType,
    operation: JSON.stringify(operationObject(op)),
    write_id: op.writeId,
    reverts: op.reverts,
  };
}

/** `GET …/db-operations/`: the original's big-data log shape (op_time in seconds). */
export function presentDbOperation(op: Operation, baseUuid: string): Json {
  return {
    dtable_uuid: baseUuid,
    id: op.id,
    op_time: Math.floor(op.opTime / 1000),
    op_type: op.opType,
    author: op.opUser,
    operation: JSON.stringify(operationObject(op)),
  };
}

/** One row change as an activity (row history): each changed cell with its column as it is now. */
export function presentActivity(op: Operation, c: LoggedChange, meta: BaseMetadata, baseUuid: string): Json {
  const table = meta.tables.find((t) => t._id === c.t);
  const keys = [...new Set([...Object.keys(c.b ?? {}), ...Object.keys(c.a ?? {})])];
  const row_data = keys.map((key) => {
    const column = table?.columns.find((col) => col.key === key);
    const item: Json = {
      column_key: key,
      column_name: column?.name ?? key,
      column_type: column?.type ?? null,
      column_data: column?.data ?? null,
      value: c.a?.[key] ?? null,
    };
    if (c.o !== 'insert_row') item.old_value = c.b?.[key] ?? null;
    return item;
  });
  return {
    id: op.id,
    dtable_uuid: baseUuid,
    row_id: c.r,
    op_user: op.opUser,
    op_app: op.opApp,
    op_type: c.o,
    op_time: new Date(op.opTime).toISOString(),
    detail: { table_id: c.t, table_name: table?.name ?? '', row_name: c.n, row_data },
  };
}
