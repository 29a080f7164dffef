import { describe, expect, it } from 'vitest';
import type { BaseMetadata } from '../rows/index.js';
import type { LoggedChange, Operation } from './history.types.js';
import { operationScope, scopeOperation } from './scoped-operations.js';

/** Table1 (in the scope) links to Secret (outside it) through `lnk`, and `lkp` looks up through that link. */
const meta = {
  tables: [
    {
      _id: 'T1',
      name: 'Table1',
      columns: [
        { key: '0000', name: 'Name', type: 'text' },
        { key: 'lnk1', name: 'To secret', type: 'link', data: { table_id: 'T1', other_table_id: 'SEC' } },
        { key: 'lkp1', name: 'Looked up', type: 'link-formula', data: { formula: 'lookup', link_column_key: 'lnk1', level1_linked_column_key: '0000' } },
      ],
    },
    { _id: 'SEC', name: 'Secret', columns: [{ key: '0000', name: 'Name', type: 'text' }] },
  ],
} as unknown as BaseMetadata;

const op = (rows: LoggedChange[], structure?: Array<Record<string, unknown>>): Operation => ({
  id: 1, baseId: 1, writeId: 'w', opType: 'batch', tableId: 'T1', opUser: 'u', opApp: null, opTime: 0, rowCount: rows.length, reverts: null,
  changes: { rows, ...(structure ? { structure } : {}) },
});

describe('scopeOperation', () => {
  const scope = operationScope(meta, ['T1']);

  it('hides the link column to a table outside the scope and what reads through it', () => {
    expect([...scope.hidden.get('T1')!].sort()).toEqual(['lkp1', 'lnk1']);
  });

  it('strips hidden cells, drops changes left empty and changes of tables outside the scope', () => {
    const seen = scopeOperation(
      op([
        { o: 'modify_row', t: 'T1', r: 'r1', n: 'a', b: { '0000': 'old', lkp1: ['x'] }, a: { '0000': 'new', lkp1: ['y'] } },
        { o: 'modify_row', t: 'T1', r: 'r2', n: 'b', b: { lkp1: ['x'] }, a: { lkp1: ['y'] } },
        { o: 'add_link', t: 'T1', r: 'r3', n: 'c', b: { lnk1: [] }, a: { lnk1: ['secretrow'] } },
        { o: 'delete_row', t: 'T1', r: 'r4', n: 'd', b: { '0000': 'gone', lnk1: ['secretrow'] }, l: { lnk1: ['secretrow'] } },
        { o: 'modify_row', t: 'SEC', r: 's1', n: 's', b: { '0000': 'x' }, a: { '0000': 'y' } },
      ]),
      scope,
    )!;
    expect(seen.changes.rows).toEqual([
      { o: 'modify_row', t: 'T1', r: 'r1', n: 'a', b: { '0000': 'old' }, a: { '0000': 'new' } },
      { o: 'delete_row', t: 'T1', r: 'r4', n: 'd', b: { '0000': 'gone' }, l: {} },
    ]);
    expect(JSON.stringify(seen)).not.toMatch(/secretrow|SEC|lnk1|lkp1/);
  });

  it('leaves out structure entries naming a hidden column or a table outside the scope, and an operation left with nothing', () => {
    const structure = [
      { op_type: 'insert_column', table_id: 'T1', column: { key: 'lnk1', name: 'To secret', data: { other_table_id: 'SEC' } } },
      { op_type: 'modify_view', table_id: 'T1', view: { filters: [{ column_key: 'lkp1', filter_term: 'x' }] } },
      { op_type: 'rename_column', table_id: 'T1', column_key: '0000', new_column_name: 'Title' },
    ];
    expect(scopeOperation(op([], structure), scope)!.changes.structure).toEqual([structure[2]]);
    expect(scopeOperation(op([], structure.slice(0, 2)), scope)).toBeNull();
  });
});
