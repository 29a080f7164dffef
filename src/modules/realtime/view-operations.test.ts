import { describe, expect, it } from 'vitest';
import type { ChangeEvent, RowDataItem } from '../events/index.js';
import type { TableMeta, ViewMeta } from '../rows/index.js';
import { lensOf, viewOperation } from './view-operations.js';

const columns = [
  { key: 'name', name: 'Name', type: 'text', data: null },
  { key: 'team', name: 'Team', type: 'text', data: null },
  { key: 'pay', name: 'Pay', type: 'number', data: null },
  { key: 'who', name: 'Who', type: 'collaborator', data: null },
];
const view = (over: Partial<ViewMeta>): ViewMeta =>
  ({ _id: 'V1', name: 'V', type: 'table', is_locked: false, filter_conjunction: 'And', filters: [], sorts: [], groupbys: [], hidden_columns: [], ...over }) as ViewMeta;
const table = (v: ViewMeta): TableMeta => ({ _id: 'T1', name: 'People', is_header_locked: false, header_settings: {}, summary_configs: {}, columns: columns as never, views: [v] });
const red = view({ filters: [{ column_key: 'team', filter_predicate: 'is', filter_term: 'red' }], hidden_columns: ['pay'] });
const ctx = { now: 0, timeZone: 'UTC' };

const cell = (key: string, value: unknown, old?: unknown): RowDataItem => ({ column_key: key, column_name: key, column_type: 'text', column_data: null, value, old_value: old });
function event(opType: ChangeEvent['opType'], rowId: string, row: Record<string, unknown> | null, rowData: RowDataItem[]): ChangeEvent {
  return { id: 1, baseId: 1, baseUuid: 'b', tableId: 'T1', tableName: 'People', rowId, rowName: '', opType, opUser: 'u@auth.local', opApp: null, opTime: 1, rowData, row: row && { _id: rowId, ...row }, writeId: 'w' };
}

describe("a view share's live operations", () => {
  const lens = lensOf(table(red), red);

  it('keeps inserted rows the view shows, without hidden cells', () => {
    const op = viewOperation(
      [event('insert_row', 'a', { name: 'Ann', team: 'red', pay: 1 }, [cell('name', 'Ann'), cell('team', 'red'), cell('pay', 1)]), event('insert_row', 'b', { name: 'Ben', team: 'blue', pay: 2 }, [])],
      lens,
      ctx,
    );
    expect(op).toMatchObject({ op_type: 'insert_row', row_id: '', row_data: { _id: 'a', name: 'Ann', team: 'red' } });
    expect(op!.row_data).not.toHaveProperty('pay');
    expect(viewOperation([event('insert_row', 'b', { team: 'blue' }, [])], lens, ctx)).toBeNull();
    expect(viewOperation([event('insert_row', 'c', { team: 'red', _archived: true }, [])], lens, ctx)).toBeNull();
  });

  it('keeps a changed row shown before or after, unless only hidden cells changed', () => {
    const entering = event('modify_row', 'a', { team: 'red', pay: 2 }, [cell('team', 'red', 'blue'), cell('pay', 2, 1)]);
    expect(viewOperation([entering], lens, ctx)).toMatchObject({ op_type: 'modify_row', updated: { team: 'red' }, old_row: { team: 'blue' } });
    const leaving = event('modify_row', 'a', { team: 'blue' }, [cell('team', 'blue', 'red')]);
    expect(viewOperation([leaving], lens, ctx)).toMatchObject({ updated: { team: 'blue' } });
    expect(viewOperation([event('modify_row', 'a', { team: 'red', pay: 3 }, [cell('pay', 3, 2)])], lens, ctx)).toBeNull();
    expect(viewOperation([event('modify_row', 'a', { team: 'blue', name: 'B' }, [cell('name', 'B', 'A')])], lens, ctx)).toBeNull();
    // Hidden cells only, but the row came in through them: still sent (with no cell).
    const byHidden = lensOf(table(view({ filters: [{ column_key: 'pay', filter_predicate: 'greater', filter_term: 5 }], hidden_columns: ['pay'] })), view({ filters: [{ column_key: 'pay', filter_predicate: 'greater', filter_term: 5 }], hidden_columns: ['pay'] }));
    expect(viewOperation([event('modify_row', 'a', { pay: 9 }, [cell('pay', 9, 1)])], byHidden, ctx)).toMatchObject({ op_type: 'modify_row', updated: {} });
  });

  it('keeps deleted rows the view showed; other tables are not sent', () => {
    expect(viewOperation([event('delete_row', 'a', null, [cell('name', undefined, 'Ann'), cell('team', undefined, 'red'), cell('pay', undefined, 1)])], lens, ctx)).toMatchObject({ op_type: 'delete_row', deleted_row: { _id: 'a', name: 'Ann' } });
    expect(viewOperation([event('delete_row', 'b', null, [cell('team', undefined, 'blue')])], lens, ctx)).toBeNull();
    expect(viewOperation([{ ...event('insert_row', 'a', { team: 'red' }, []), tableId: 'T2' }], lens, ctx)).toBeNull();
  });

  describe('link changes', () => {
    const links = { ...columns[0]!, key: 'links', name: 'Links', type: 'link', data: { link_id: 'L1', table_id: 'T1', other_table_id: 'T2' } };
    const hiddenLinks = { ...links, key: 'secret', name: 'Secret links', data: { link_id: 'L2', table_id: 'T1', other_table_id: 'T2' } };
    const linked = view({ filters: [{ column_key: 'team', filter_predicate: 'is', filter_term: 'red' }], hidden_columns: ['pay', 'secret'] });
    const linkLens = lensOf({ ...table(linked), columns: [...columns, links, hiddenLinks] as never }, linked);
    /** Row `rowId` of table `tableId` (team `team`) linked, through `column`, from `old` to `now` other rows. */
    const link = (tableId: string, rowId: string, team: string, column: typeof links, now: string[], old: string[]): ChangeEvent => ({
      ...event(now.length > old.length ? 'add_link' : 'remove_link', rowId, { team, [column.key]: now }, [{ column_key: column.key, column_name: column.name, column_type: 'link', column_data: column.data, value: now, old_value: old }]),
      tableId,
    });

    it("sends the view's side for a row it shows, through a column it shows", () => {
      // Both sides of one link: the view's row a (red) and the other table's row x.
      const op = viewOperation([link('T1', 'a', 'red', links, ['x'], []), link('T2', 'x', '', { ...links, key: 'back' }, ['a'], [])], linkLens, ctx);
      expect(op).toMatchObject({ op_type: 'add_link', link_id: 'L1', table1_id: 'T1', table2_id: 'T2', table1_row_id: 'a', table2_row_id: 'x' });
      const removed = viewOperation([link('T1', 'a', 'red', links, [], ['x'])], linkLens, ctx);
      expect(removed).toMatchObject({ op_type: 'remove_link', table1_row_id: 'a', table2_row_id: 'x' });
    });

    it('sends only the rows the view shows, among several', () => {
      const op = viewOperation([link('T1', 'a', 'red', links, ['x', 'y'], []), link('T1', 'b', 'blue', links, ['x'], [])], linkLens, ctx);
      expect(op).toMatchObject({ op_type: 'update_rows_links', table_id: 'T1', row_id_list: ['a'], other_rows_ids_map: { a: ['x', 'y'] }, old_other_rows_ids_map: { a: [] } });
    });

    it('sends nothing for a row it does not show, a hidden link column or the other side only', () => {
      expect(viewOperation([link('T1', 'b', 'blue', links, ['x'], [])], linkLens, ctx)).toBeNull();
      expect(viewOperation([link('T1', 'a', 'red', hiddenLinks, ['x'], [])], linkLens, ctx)).toBeNull();
      expect(viewOperation([link('T2', 'x', '', links, ['a'], [])], linkLens, ctx)).toBeNull();
    });

    it("sends it from the view's table when the link belongs to the other table (linked back)", () => {
      const back = { ...links, key: 'links', data: { link_id: 'L3', table_id: 'T2', other_table_id: 'T1' } };
      const op = viewOperation([link('T2', 'x', '', { ...back, key: 'fwd' }, ['a'], []), link('T1', 'a', 'red', back, ['x'], [])], linkLens, ctx);
      expect(op).toMatchObject({ op_type: 'add_link', link_id: 'L3', table1_id: 'T2', table2_id: 'T1', table1_row_id: 'x', table2_row_id: 'a' });
    });
  });

  it("judges a filter naming the current user with the holder's id", () => {
    const mine = view({ filters: [{ column_key: 'who', filter_predicate: 'include_me' }] });
    const own = lensOf(table(mine), mine);
    const row = event('insert_row', 'a', { who: ['me@auth.local'] }, []);
    expect(viewOperation([row], own, { ...ctx, currentUser: 'me@auth.local' })).not.toBeNull();
    expect(viewOperation([row], own, { ...ctx, currentUser: 'other@auth.local' })).toBeNull();
  });
});
