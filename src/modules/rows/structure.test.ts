import { describe, expect, it } from 'vitest';
import { defaultMetadata, newColumn, newTable } from './default-metadata.js';
import type { BaseMetadata } from './metadata.js';
import { insertEvent, linkEvent, modifyEvent, deleteEvent } from './row-events.js';
import { addLinkColumn, filtersByKey, removeColumnFromTable, removeLinkColumns } from './structure.js';

function twoTables(): BaseMetadata {
  const meta = defaultMetadata();
  meta.tables.push(newTable('T002', 'People', [newColumn('0000', 'Who', 'text', null), newColumn('age1', 'Age', 'number', null)]));
  return meta;
}

describe('structure edits', () => {
  it('adds a link column with a twin named after the table, sharing the link id', () => {
    const meta = twoTables();
    const column = addLinkColumn(meta, meta.tables[0]!, 'People', { other_table: 'People' }, undefined, 'lk01');
    const twin = meta.tables[1]!.columns.find((c) => c.type === 'link')!;
    expect(column.data).toMatchObject({ link_id: 'lk01', table_id: '0000', other_table_id: 'T002', display_column_key: '0000' });
    expect(twin).toMatchObject({ name: 'Table1', data: { link_id: column.data!.link_id, table_id: '0000', other_table_id: 'T002' } });
    removeLinkColumns(meta, column.data!.link_id as string);
    expect(meta.tables.flatMap((t) => t.columns).some((c) => c.type === 'link')).toBe(false);
  });

  it('names a twin so it does not clash with an existing column', () => {
    const meta = twoTables();
    meta.tables[1]!.columns.push(newColumn('x001', 'Table1', 'text', null));
    addLinkColumn(meta, meta.tables[0]!, 'L', { other_table_id: 'T002' }, undefined, 'lk02');
    expect(meta.tables[1]!.columns.at(-1)!.name).toBe('Table1-2');
  });

  it('removes a column and every view reference to it, nested filters included', () => {
    const meta = twoTables();
    const table = meta.tables[1]!;
    const view = table.views[0]!;
    view.sorts = [{ column_key: 'age1', sort_type: 'up' }];
    view.groupbys = [{ column_key: 'age1' }];
    view.hidden_columns = ['age1', '0000'];
    view.filters = [
      { column_key: 'age1', filter_predicate: 'is_empty' },
      { column_name: 'Age', filter_predicate: 'is_empty' },
      { filters: [{ column_key: 'age1', filter_predicate: 'is_empty' }] },
      { filters: [{ column_key: '0000', filter_predicate: 'is_empty' }, { column_key: 'age1', filter_predicate: 'is_empty' }] },
      { column_key: '0000', filter_predicate: 'is_not_empty' },
    ];
    removeColumnFromTable(table, 'age1');
    expect(table.columns.map((c) => c.key)).toEqual(['0000']);
    expect(view).toMatchObject({ sorts: [], groupbys: [], hidden_columns: ['0000'] });
    expect(view.filters).toEqual([
      { filters: [{ column_key: '0000', filter_predicate: 'is_empty' }] },
      { column_key: '0000', filter_predicate: 'is_not_empty' },
    ]);
  });

  it('rewrites filters by name to filters by key, leaving unknown names for validation', () => {
    const table = twoTables().tables[1]!;
    expect(filtersByKey([{ column_name: 'Age', filter_predicate: 'equal', filter_term: 1 }, { filters: [{ column_name: 'Who' }] }, { column_name: 'Nope' }, 'junk'], table)).toEqual([
      { column_key: 'age1', filter_predicate: 'equal', filter_term: 1 },
      { filters: [{ column_key: '0000' }] },
      { column_name: 'Nope' },
      'junk',
    ]);
  });
});

describe('row events', () => {
  const table = newTable('T1', 'Tasks', [newColumn('0000', 'Title', 'text', null), newColumn('n001', 'N', 'number', { format: 'number' }), newColumn('c001', 'C', 'ctime', null)]);
  const base = { id: 7, uuid: 'u' };
  const actor = { user: 'app', app: 'app' };
  const row = { _id: 'r1', _ctime: 1, _mtime: 2, _creator: 'a', _last_modifier: 'b', data: { '0000': 'x', n001: 1 } };

  it('insert and delete carry every stored cell, computed columns excluded', () => {
    const inserted = insertEvent(base, table, row, actor, 99);
    expect(inserted).toMatchObject({ baseId: 7, tableId: 'T1', tableName: 'Tasks', rowName: 'x', opType: 'insert_row', opUser: 'app', opApp: 'app', opTime: 99 });
    expect(inserted.rowData.map((d) => [d.column_key, d.value, d.old_value])).toEqual([
      ['0000', 'x', null],
      ['n001', 1, null],
    ]);
    expect(deleteEvent(base, table, row, actor, 99).rowData.map((d) => [d.value, d.old_value])).toEqual([
      [null, 'x'],
      [null, 1],
    ]);
  });

  it('modify carries only changed cells and is null when nothing changed', () => {
    const after = { ...row, data: { '0000': 'x', n001: 2 } };
    expect(modifyEvent(base, table, row, after, actor, 1)!.rowData).toEqual([
      { column_key: 'n001', column_name: 'N', column_type: 'number', column_data: { format: 'number' }, value: 2, old_value: 1 },
    ]);
    expect(modifyEvent(base, table, row, { ...row, data: { ...row.data } }, actor, 1)).toBeNull();
    const cleared = modifyEvent(base, table, row, { ...row, data: { '0000': 'x' } }, actor, 1)!;
    expect(cleared.rowData[0]).toMatchObject({ value: null, old_value: 1 });
  });

  it('link events are add_link when something was added, else remove_link', () => {
    const link = newColumn('l001', 'L', 'link', { link_id: 'k' });
    expect(linkEvent(base, table, row, link, ['a'], ['a', 'b'], actor, 1).opType).toBe('add_link');
    const removed = linkEvent(base, table, row, link, ['a', 'b'], ['b'], actor, 1);
    expect(removed.opType).toBe('remove_link');
    expect(removed.row).toMatchObject({ l001: ['b'] });
  });
});
