import { describe, expect, it } from 'vitest';
import type { ChangeEvent, OpType } from '../events/index.js';
import { evaluate, recipientsFor, storedRowOf, type EngineContext } from './engine.js';
import type { MetaDoc } from './metadata-doc.js';
import { prepareRule, type PreparedRule } from './rule-check.js';
import { ruleBuilder } from './rules.fixture.js';
import type { Member, Rule, RuleTrigger } from './rules.model.js';

const ALICE = 'a'.repeat(32) + '@auth.local';
const BOB = 'b'.repeat(32) + '@auth.local';
const CAROL = 'c'.repeat(32) + '@auth.local';
const STRANGER = 'f'.repeat(32) + '@auth.local';

const members = new Map<string, Member>([
  [ALICE, { userId: 1, name: 'Alice' }],
  [BOB, { userId: 2, name: 'Bob' }],
  [CAROL, { userId: 3, name: 'Carol' }],
]);

const doc: MetaDoc = {
  tables: [
    {
      _id: 'T1',
      name: 'Tasks',
      columns: [
        { key: 'name', name: 'Name', type: 'text', data: null },
        { key: 'stat', name: 'Status', type: 'single-select', data: { options: [{ id: '1', name: 'Open' }, { id: '2', name: 'Done' }] } },
        { key: 'prio', name: 'Priority', type: 'number', data: null },
        { key: 'who', name: 'Assignee', type: 'collaborator', data: null },
        { key: 'made', name: 'Made by', type: 'creator', data: null },
        { key: 'chg', name: 'Changed by', type: 'last-modifier', data: null },
        { key: 'due', name: 'Due', type: 'date', data: { format: 'YYYY-MM-DD' } },
      ],
      views: [
        { _id: 'all', name: 'All', filters: [], filter_conjunction: 'And' },
        { _id: 'open', name: 'Open', filters: [{ column_key: 'stat', filter_predicate: 'is', filter_term: 'Open' }], filter_conjunction: 'And' },
        { _id: 'mine', name: 'Mine', filters: [{ column_key: 'who', filter_predicate: 'include_me' }], filter_conjunction: 'And' },
        { _id: 'broken', name: 'Broken', filters: [{ column_key: 'gone', filter_predicate: 'is', filter_term: 'x' }] },
      ],
    },
  ],
};

const rule = ruleBuilder({
  rule: { id: 7, dtableUuid: 'uuid' },
  trigger: { view_id: 'all' },
  action: { users: [BOB], default_msg: '{Name} is {Status}' },
});

function prepared(r: Rule): PreparedRule {
  const p = prepareRule(r, doc, members);
  if (!p.ok) throw new Error(p.reason);
  return p.prepared;
}

function event(op: OpType, cells: Record<string, unknown> | null, changed: string[] = ['name'], extra: Partial<ChangeEvent> = {}): ChangeEvent {
  return {
    id: 1,
    baseId: 1,
    baseUuid: 'uuid',
    tableId: 'T1',
    tableName: 'Tasks',
    rowId: 'row1',
    rowName: '',
    opType: op,
    opUser: ALICE,
    opApp: null,
    opTime: Date.UTC(2026, 0, 5, 10),
    rowData: changed.map((key) => ({ column_key: key, column_name: key, column_type: 'text', column_data: null, value: 1, old_value: 0 })),
    row: cells === null ? null : { _id: 'row1', _creator: CAROL, _last_modifier: ALICE, _ctime: '2026-01-01T00:00:00.000Z', _mtime: Date.UTC(2026, 0, 5), ...cells },
    ...extra,
  };
}

const ctx: EngineContext = { members, timeZone: 'UTC', userName: (id) => members.get(id)?.name ?? id };

describe('evaluate: which changes a rule reacts to', () => {
  it.each<[string, OpType, boolean]>([
    ['rows_modified', 'modify_row', true],
    ['rows_modified', 'add_link', true],
    ['rows_modified', 'remove_link', true],
    ['rows_modified', 'insert_row', false],
    ['rows_modified', 'delete_row', false],
    ['filters_satisfy', 'modify_row', true],
    ['filters_satisfy', 'add_link', true],
    ['filters_satisfy', 'remove_link', false],
    ['filters_satisfy', 'insert_row', false],
    ['rows_added', 'insert_row', true],
    ['rows_added', 'modify_row', false],
    ['rows_added', 'delete_row', false],
  ])('%s on %s → fires: %s', (condition, op, fires) => {
    const filters = condition === 'filters_satisfy' ? [{ column_key: 'prio', filter_predicate: 'greater', filter_term: 1 }] : undefined;
    const p = prepared(rule({ condition: condition as RuleTrigger['condition'], ...(filters ? { filters } : {}) }));
    const d = evaluate(p, event(op, { name: 'x', prio: 5 }), ctx);
    expect(d.fire).toBe(fires);
    if (!fires) expect(d).toEqual({ fire: false, reason: 'op_type' });
  });

  it('skips invalid rules, other tables, other bases, deadline rules and deleted rows', () => {
    expect(evaluate(prepared(rule({}, {}, { isValid: false })), event('modify_row', { name: 'x' }), ctx)).toEqual({ fire: false, reason: 'invalid' });
    expect(evaluate(prepared(rule()), event('modify_row', { name: 'x' }, ['name'], { tableId: 'T2' }), ctx)).toEqual({ fire: false, reason: 'other_table' });
    expect(evaluate(prepared(rule()), event('modify_row', { name: 'x' }, ['name'], { baseId: 2 }), ctx)).toEqual({ fire: false, reason: 'other_table' });
    const deadline = prepared(rule({ condition: 'near_deadline', date_column_name: 'Due', alarm_days: 1, notify_hour: 9 }));
    expect(evaluate(deadline, event('modify_row', { name: 'x' }), ctx)).toEqual({ fire: false, reason: 'not_per_update' });
    expect(evaluate(prepared(rule()), event('modify_row', null), ctx)).toEqual({ fire: false, reason: 'row_deleted' });
  });

  it('fires with the recipients and the contract detail', () => {
    const d = evaluate(prepared(rule()), event('modify_row', { name: 'Task 1', stat: 'Open' }), ctx);
    expect(d).toEqual({
      fire: true,
      rowId: 'row1',
      recipients: [2],
      detail: { table_id: 'T1', view_id: 'all', condition: 'rows_modified', rule_id: 7, rule_name: 'R', msg: 'Task 1 is Open', row_id_list: ['row1'] },
    });
  });

  it('reports rows_added as rows_added (the original says filters_satisfy)', () => {
    const d = evaluate(prepared(rule({ condition: 'rows_added' })), event('insert_row', { name: 'n' }), ctx);
    expect(d.fire && d.detail.condition).toBe('rows_added');
  });
});

describe('evaluate: the rule view', () => {
  it('fires only for rows in the view after the change', () => {
    const p = prepared(rule({ view_id: 'open' }));
    expect(evaluate(p, event('modify_row', { name: 'x', stat: 'Open' }), ctx).fire).toBe(true);
    expect(evaluate(p, event('modify_row', { name: 'x', stat: 'Done' }), ctx)).toEqual({ fire: false, reason: 'not_in_view' });
  });

  it('evaluates include_me in the view with the user who made the change', () => {
    const p = prepared(rule({ view_id: 'mine' }));
    expect(evaluate(p, event('modify_row', { who: [ALICE] }), ctx).fire).toBe(true);
    expect(evaluate(p, event('modify_row', { who: [BOB] }), ctx).fire).toBe(false);
  });

  it('matches nothing when the view filters no longer parse (the rule itself stays valid)', () => {
    const p = prepared(rule({ view_id: 'broken' }));
    expect(p.viewFilterBroken).toBe(true);
    expect(evaluate(p, event('modify_row', { name: 'x' }), ctx)).toEqual({ fire: false, reason: 'not_in_view' });
  });

  it('applies the view to rows_added too', () => {
    const p = prepared(rule({ condition: 'rows_added', view_id: 'open' }));
    expect(evaluate(p, event('insert_row', { stat: 'Open' }), ctx).fire).toBe(true);
    expect(evaluate(p, event('insert_row', { stat: 'Done' }), ctx).fire).toBe(false);
  });
});

describe('evaluate: watched columns', () => {
  it('watches every column when watch_all_columns is true or absent', () => {
    expect(evaluate(prepared(rule()), event('modify_row', { name: 'x' }, ['prio']), ctx).fire).toBe(true);
    expect(evaluate(prepared(rule({ watch_all_columns: true, column_keys: ['name'] })), event('modify_row', {}, ['prio']), ctx).fire).toBe(true);
  });

  it('with watch_all_columns false, fires only when a listed column changed', () => {
    const p = prepared(rule({ watch_all_columns: false, column_keys: ['stat', 'prio'] }));
    expect(evaluate(p, event('modify_row', {}, ['name']), ctx)).toEqual({ fire: false, reason: 'column_not_watched' });
    expect(evaluate(p, event('modify_row', {}, ['name', 'prio']), ctx).fire).toBe(true);
  });

  it('does not fire for a modification without changed cells', () => {
    expect(evaluate(prepared(rule()), event('modify_row', { name: 'x' }, []), ctx)).toEqual({ fire: false, reason: 'column_not_watched' });
  });

  it('ignores watched columns for rows_added', () => {
    const p = prepared(rule({ condition: 'rows_added', watch_all_columns: false, column_keys: ['prio'] }));
    expect(evaluate(p, event('insert_row', { name: 'x' }, ['name']), ctx).fire).toBe(true);
  });
});

describe('evaluate: filters_satisfy', () => {
  const filters = [
    { column_key: 'prio', filter_predicate: 'greater', filter_term: 3 },
    { column_key: 'stat', filter_predicate: 'is', filter_term: 'Open' },
  ];

  it('fires when the row after the change matches all filters (And)', () => {
    const p = prepared(rule({ condition: 'filters_satisfy', filters, filter_conjunction: 'And' }));
    expect(evaluate(p, event('modify_row', { prio: 5, stat: 'Open' }, ['prio']), ctx).fire).toBe(true);
    expect(evaluate(p, event('modify_row', { prio: 5, stat: 'Done' }, ['prio']), ctx)).toEqual({ fire: false, reason: 'filters_not_met' });
  });

  it('fires when any filter matches (Or)', () => {
    const p = prepared(rule({ condition: 'filters_satisfy', filters, filter_conjunction: 'Or' }));
    expect(evaluate(p, event('modify_row', { prio: 1, stat: 'Open' }, ['prio']), ctx).fire).toBe(true);
    expect(evaluate(p, event('modify_row', { prio: 1, stat: 'Done' }, ['prio']), ctx).fire).toBe(false);
  });

  it('is level-triggered: a change of a watched column of an already matching row fires again', () => {
    const p = prepared(rule({ condition: 'filters_satisfy', filters: filters.slice(0, 1) }));
    expect(evaluate(p, event('modify_row', { prio: 5, name: 'a' }, ['name']), ctx).fire).toBe(true);
    expect(evaluate(p, event('modify_row', { prio: 5, name: 'b' }, ['name']), ctx).fire).toBe(true);
  });

  it('needs a watched column to change when watch_all_columns is false', () => {
    const p = prepared(rule({ condition: 'filters_satisfy', filters: filters.slice(0, 1), watch_all_columns: false, column_keys: ['stat'] }));
    expect(evaluate(p, event('modify_row', { prio: 5 }, ['prio']), ctx)).toEqual({ fire: false, reason: 'column_not_watched' });
    expect(evaluate(p, event('modify_row', { prio: 5 }, ['stat']), ctx).fire).toBe(true);
  });

  it('applies optional filters to rows_added', () => {
    const p = prepared(rule({ condition: 'rows_added', filters: filters.slice(0, 1) }));
    expect(evaluate(p, event('insert_row', { prio: 9 }), ctx).fire).toBe(true);
    expect(evaluate(p, event('insert_row', { prio: 1 }), ctx)).toEqual({ fire: false, reason: 'filters_not_met' });
  });

  it('ignores filters on rows_modified rules (they only use the view)', () => {
    const p = prepared(rule({ filters }));
    expect(p.ruleFilter).toBeNull();
    expect(evaluate(p, event('modify_row', { prio: 0 }), ctx).fire).toBe(true);
  });
});

describe('recipients', () => {
  const WHEN = { now: Date.UTC(2026, 0, 15), timeZone: 'UTC' };

  it('notifies a user with view shares only when one of their views shows the row', () => {
    const DAVE = 'd'.repeat(32) + '@auth.local';
    const ERIN = 'e'.repeat(32) + '@auth.local';
    const withViewers = new Map<string, Member>([
      ...members,
      [DAVE, { userId: 4, name: 'Dave', views: [{ table: 'T1', view: 'open' }] }],
      [ERIN, { userId: 5, name: 'Erin', views: [{ table: 'T1', view: 'mine' }, { table: 'T2', view: 'all' }] }],
    ]);
    const p = prepared(rule({}, { users: [BOB], users_column_key: 'who' }));
    const open = storedRowOf(event('modify_row', { stat: 'Open', who: [DAVE, ERIN] }));
    const done = storedRowOf(event('modify_row', { stat: 'Done', who: [CAROL, DAVE] }));
    // Dave's view shows open rows; Erin's shows rows she is assigned to (include_me: she is the current user).
    expect(recipientsFor(p, open, withViewers, WHEN)).toEqual([2, 4, 5]);
    expect(recipientsFor(p, done, withViewers, WHEN)).toEqual([2, 3]);
    // A view of another table, a deleted view or a view whose filters no longer parse shows nothing.
    const elsewhere = new Map<string, Member>([[DAVE, { userId: 4, name: 'Dave', views: [{ table: 'T2', view: 'open' }, { table: 'T1', view: 'gone' }, { table: 'T1', view: 'broken' }] }]]);
    expect(recipientsFor(prepared(rule({}, { users: [], users_column_key: 'who' })), storedRowOf(event('modify_row', { stat: 'Open', who: [DAVE] })), elsewhere, WHEN)).toEqual([]);
    // A view without filters shows every row.
    const all = new Map<string, Member>([[DAVE, { userId: 4, name: 'Dave', views: [{ table: 'T1', view: 'all' }] }]]);
    expect(recipientsFor(prepared(rule({}, { users: [], users_column_key: 'who' })), storedRowOf(event('modify_row', { stat: 'Done', who: [DAVE] })), all, WHEN)).toEqual([4]);
  });

  it('joins action.users and the collaborator cell, de-duplicated, limited to members', () => {
    const p = prepared(rule({}, { users: [BOB], users_column_key: 'who' }));
    const row = storedRowOf(event('modify_row', { who: [CAROL, BOB, STRANGER, CAROL] }));
    expect(recipientsFor(p, row, members, WHEN)).toEqual([2, 3]);
  });

  it('takes a single user id string in the cell', () => {
    const p = prepared(rule({}, { users: [], users_column_key: 'who' }));
    expect(recipientsFor(p, storedRowOf(event('modify_row', { who: CAROL })), members, WHEN)).toEqual([3]);
  });

  it('reads creator and last-modifier columns from the row itself', () => {
    const made = prepared(rule({}, { users: [], users_column_key: 'made' }));
    const changed = prepared(rule({}, { users: [], users_column_key: 'chg' }));
    const row = storedRowOf(event('modify_row', {}));
    expect(recipientsFor(made, row, members, WHEN)).toEqual([3]);
    expect(recipientsFor(changed, row, members, WHEN)).toEqual([1]);
  });

  it('skips when nobody is left to notify', () => {
    const p = prepared(rule({}, { users: [], users_column_key: 'who' }));
    expect(evaluate(p, event('modify_row', { who: [STRANGER] }), ctx)).toEqual({ fire: false, reason: 'no_recipients' });
    expect(evaluate(p, event('modify_row', { who: 'not-an-array-member' }), ctx)).toEqual({ fire: false, reason: 'no_recipients' });
  });

  it('does not exclude the user who made the change (as the original)', () => {
    const p = prepared(rule({}, { users: [ALICE] }));
    expect(evaluate(p, event('modify_row', { name: 'x' }), ctx)).toMatchObject({ fire: true, recipients: [1] });
  });
});

describe('storedRowOf', () => {
  it('splits row fields from cells and parses ISO or ms times', () => {
    const row = storedRowOf(event('modify_row', { name: 'x', prio: 2 }));
    expect(row).toEqual({
      _id: 'row1',
      _ctime: Date.UTC(2026, 0, 1),
      _mtime: Date.UTC(2026, 0, 5),
      _creator: CAROL,
      _last_modifier: ALICE,
      data: { name: 'x', prio: 2 },
    });
  });

  it('falls back to the event for missing row fields', () => {
    const e = event('modify_row', {});
    e.row = { name: 'y' };
    expect(storedRowOf(e)).toEqual({ _id: 'row1', _ctime: e.opTime, _mtime: e.opTime, _creator: ALICE, _last_modifier: ALICE, data: { name: 'y' } });
  });
});
