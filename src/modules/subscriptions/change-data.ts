import type { ChangeEvent } from '../events/index.js';
import { presentCell } from '../../shared/dates/index.js';

/**
 * A row change as webhooks send it (`data` of the body) and the change feed lists it: the original's
 * table-events message (contract §10), except that insert and delete carry the row's cells and modify
 * carries `value` and `old_value` of each changed cell; date cells as every answer shows them.
 */
export function changeData(event: ChangeEvent) {
  return {
    dtable_uuid: event.baseUuid,
    row_id: event.rowId,
    op_user: event.opUser,
    op_type: event.opType,
    op_time: event.opTime / 1000,
    table_id: event.tableId,
    table_name: event.tableName,
    row_name: event.rowName,
    row_data: event.rowData.map((item) => ({
      ...item,
      value: presentCell(item.column_type, item.column_data, item.value),
      old_value: presentCell(item.column_type, item.column_data, item.old_value),
    })),
    op_app: event.opApp,
  };
}
