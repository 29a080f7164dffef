import { badRequest } from '../../shared/errors.js';
import type { Actor, BaseRef } from './base-writer.js';
import type { RowsService } from './rows.service.js';

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A row's cells as dtable-store sends them (keyed by column key), without the `_id`, `_ctime`, … it fills in itself. */
function cellsOf(rowData: unknown, label: string): Body {
  if (!isObject(rowData)) throw badRequest(`${label} invalid.`);
  return Object.fromEntries(Object.entries(rowData).filter(([key]) => !key.startsWith('_')));
}

function idsOf(value: unknown, label: string): string[] {
  if (!Array.isArray(value) || !value.every((id) => typeof id === 'string')) throw badRequest(`${label} invalid.`);
  return value as string[];
}

/** The row operations this server takes over the live channel, as dtable-store's `update-dtable` sends them. */
export const LIVE_OPERATION_TYPES = ['insert_row', 'insert_rows', 'append_rows', 'modify_row', 'modify_rows', 'delete_row', 'delete_rows'] as const;

/**
 * Applies one operation a live client sent (`update-dtable`) through the rows API's own path: the same
 * coercion, limits and change events as `POST/PUT/DELETE …/rows/`. Inserted rows keep the ids the client
 * gave them (it changes them by those ids next). Structure operations (tables, columns, views) are refused:
 * the client makes them through the API.
 */
export async function applyLiveOperation(rows: RowsService, base: BaseRef, actor: Actor, op: unknown): Promise<void> {
  if (!isObject(op) || typeof op.op_type !== 'string') throw badRequest('operation invalid.');
  const table = { table_id: op.table_id };
  switch (op.op_type) {
    case 'insert_row': {
      const data = isObject(op.row_data) ? op.row_data : {};
      await rows.appendWithIds(base, actor, { ...table, rows: [cellsOf(op.row_data, 'row_data')] }, [String(data._id ?? op.row_id ?? '')]);
      return;
    }
    case 'insert_rows':
    case 'append_rows': {
      if (!Array.isArray(op.row_datas)) throw badRequest('row_datas invalid.');
      const datas = op.row_datas as unknown[];
      const ids = datas.map((data) => String((isObject(data) && data._id) || ''));
      await rows.appendWithIds(base, actor, { ...table, rows: datas.map((data, i) => cellsOf(data, `row_datas.${i}`)) }, ids);
      return;
    }
    case 'modify_row':
      if (typeof op.row_id !== 'string') throw badRequest('row_id invalid.');
      await rows.update(base, actor, { ...table, updates: [{ row_id: op.row_id, row: cellsOf(op.updated, 'updated') }] });
      return;
    case 'modify_rows': {
      const updates = isObject(op.id_row_updates) ? op.id_row_updates : null;
      if (!updates) throw badRequest('id_row_updates invalid.');
      const ids = idsOf(op.row_ids ?? Object.keys(updates), 'row_ids');
      await rows.update(base, actor, { ...table, updates: ids.map((id) => ({ row_id: id, row: cellsOf(updates[id], `id_row_updates.${id}`) })) });
      return;
    }
    case 'delete_row':
      if (typeof op.row_id !== 'string') throw badRequest('row_id invalid.');
      await rows.remove(base, actor, { ...table, row_ids: [op.row_id] });
      return;
    case 'delete_rows':
      await rows.remove(base, actor, { ...table, row_ids: idsOf(op.row_ids, 'row_ids') });
      return;
    default:
      throw badRequest(`Operation ${op.op_type.slice(0, 64)} is not supported over the live connection; use the API.`);
  }
}
