import { describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../events/index.js';
import { groupWrites, toOperation } from './operations.js';

const link = { link_id: 'lk01', table_id: 'T1', other_table_id: 'T2' };

let nextId = 1;
function event(over: Partial<ChangeEvent>): ChangeEvent {
  return {
    id: nextId++,
    baseId: 1,
    baseUuid: 'b',
    tableId: 'T1',
    tableName: 'Tasks',
    rowId: `r${nextId}`,
    rowName: '',
    opType: 'insert_row',
    opUser: 'u@auth.local',
    opApp: null,
    opTime: 1,
    rowData: [],
    row: { _id: `r${nextId}` },
    writeId: 'w1',
    ...over,
  };
}

function linkEvent(tableId: string, rowId: string, after: string[], before: string[], writeId = 'w1'): ChangeEvent {
  const cell = { column_key: tableId === 'T1' ? 'lnk1' : 'lnk2', column_name: 'L', column_type: 'link', column_data: link, value: after, old_value: before };
  return event({ tableId, rowId, opType: after.length >= before.length ? 'add_link' : 'remove_link', rowData: [cell], row: null, writeId });
}

describe('update-dtable operations', () => {
  it('groups the events of one write by kind and table, and keeps other writes and old events apart', () => {
    const groups = groupWrites([
      event({ rowId: 'a' }),
      event({ rowId: 'b' }),
      event({ rowId: 'c', tableId: 'T2' }),
      event({ rowId: 'a', opType: 'modify_row' }),
      event({ rowId: 'd', writeId: 'w2' }),
      event({ rowId: 'e', writeId: null }),
      event({ rowId: 'f', writeId: null }),
    ]);
    expect(groups.map((g) => g.map((e) => e.rowId))).toEqual([['a', 'b'], ['c'], ['a'], ['d'], ['e'], ['f']]);
  });

  it('sends one pair as add_link / remove_link named from the link table, whichever side the events are on', () => {
    const add = toOperation([linkEvent('T1', 'x', ['y'], []), linkEvent('T2', 'y', ['x'], [])]);
    expect(add).toMatchObject({ op_type: 'add_link', link_id: 'lk01', table1_id: 'T1', table2_id: 'T2', table1_row_id: 'x', table2_row_id: 'y' });
    // Only the other side's cell changed (its column was the one written through): same pair, same names.
    const removed = toOperation([linkEvent('T2', 'y', [], ['x'])]);
    expect(removed).toMatchObject({ op_type: 'remove_link', table1_id: 'T1', table1_row_id: 'x', table2_row_id: 'y' });
  });

  it('sends several pairs as update_rows_links of one side', () => {
    const op = toOperation([linkEvent('T1', 'x', ['y', 'z'], ['y']), linkEvent('T1', 'w', [], ['z']), linkEvent('T2', 'z', ['x'], ['w'])]);
    expect(op).toMatchObject({
      op_type: 'update_rows_links',
      table_id: 'T1',
      other_table_id: 'T2',
      is_linked_back: false,
      row_id_list: ['x', 'w'],
      other_rows_ids_map: { x: ['y', 'z'], w: [] },
      old_other_rows_ids_map: { x: ['y'], w: ['z'] },
    });
    const back = toOperation([linkEvent('T2', 'z', ['x', 'w'], [])]);
    expect(back).toMatchObject({ op_type: 'update_rows_links', table_id: 'T2', other_table_id: 'T1', is_linked_back: true, row_id_list: ['z'] });
  });

  it('chains the rows of insert_rows below the anchor, and names no row for a single delete', () => {
    const op = toOperation([event({ rowId: 'a', row: { _id: 'a' } }), event({ rowId: 'b', row: { _id: 'b' } }), event({ rowId: 'c', row: { _id: 'c' } })], 'top');
    expect(op).toMatchObject({ op_type: 'insert_rows', row_ids: ['top', 'a', 'b'], row_datas: [{ _id: 'a' }, { _id: 'b' }, { _id: 'c' }], row_insert_position: 'insert_below' });
    expect(toOperation([event({ rowId: 'a', opType: 'delete_row', row: null })])).toMatchObject({ op_type: 'delete_row', row_id: 'a', upper_row_id: '', deleted_row: { _id: 'a' } });
  });
});
