import { describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../events/index.js';
import { changeBody, changeSubject } from './nats.message.js';

const event: ChangeEvent = {
  id: 42,
  baseId: 1,
  baseUuid: '3f1c9b2e-0000-4000-8000-000000000001',
  tableId: '0000',
  tableName: 'Tasks',
  rowId: 'AbC',
  rowName: 'first',
  opType: 'modify_row',
  opUser: 'someone@auth.local',
  opApp: null,
  opTime: 1_767_607_200_000,
  rowData: [{ column_key: 'k1', column_name: 'Name', column_type: 'text', column_data: null, value: 'x'.repeat(2000), old_value: 'old' }],
  row: { _id: 'AbC', k1: 'x'.repeat(2000) },
};

describe('NATS messages of a change', () => {
  it('subject <prefix>.<base>.<table>.<op>, wildcard and separator characters replaced', () => {
    expect(changeSubject('basegate', event)).toBe('basegate.3f1c9b2e-0000-4000-8000-000000000001.0000.modify_row');
    expect(changeSubject('p', { ...event, tableId: 'a.b*>' })).toBe(`p.${event.baseUuid}.a_b__.modify_row`);
  });

  it('carries the change with its id; over the size limit it goes without its cells, flagged', () => {
    const full = JSON.parse(changeBody(event, 1_000_000));
    expect(full).toMatchObject({ id: 42, dtable_uuid: event.baseUuid, op_type: 'modify_row', op_time: 1_767_607_200, row: event.row });
    expect(full.row_data[0]).toMatchObject({ value: 'x'.repeat(2000), old_value: 'old' });
    const cut = JSON.parse(changeBody(event, 1000));
    expect(cut).toMatchObject({ id: 42, row_id: 'AbC', row_data: null, row: null, truncated: true });
  });
});
