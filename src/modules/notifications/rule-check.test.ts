import { describe, expect, it } from 'vitest';
import type { MetaDoc } from './metadata-doc.js';
import { prepareRule } from './rule-check.js';
import { ruleBuilder } from './rules.fixture.js';
import type { Member, RuleTrigger } from './rules.model.js';

const BOB = 'b'.repeat(32) + '@auth.local';
const members = new Map<string, Member>([[BOB, { userId: 2, name: 'Bob' }]]);

function docWith(columns: Array<{ key: string; name: string; type: string }>, views = [{ _id: 'v1', name: 'V' }]): MetaDoc {
  return { tables: [{ _id: 'T1', name: 'Tasks', columns: columns.map((c) => ({ ...c, data: null })), views }] };
}

const full = docWith([
  { key: 'name', name: 'Name', type: 'text' },
  { key: 'due', name: 'Due', type: 'date' },
  { key: 'prio', name: 'Priority', type: 'number' },
]);

const rule = ruleBuilder({ action: { users: [BOB] } });

describe('prepareRule: invalidation reasons', () => {
  it('accepts a rule that fits its base', () => {
    expect(prepareRule(rule({}), full, members).ok).toBe(true);
  });

  it.each<[string, Partial<RuleTrigger>, MetaDoc, string]>([
    ['table deleted', {}, { tables: [] }, 'its table T1 was deleted'],
    ['view deleted', {}, docWith([{ key: 'name', name: 'Name', type: 'text' }], [{ _id: 'other', name: 'O' }]), 'its view v1 of table Tasks was deleted'],
    [
      'date column deleted',
      { condition: 'near_deadline', date_column_name: 'Due' },
      docWith([{ key: 'name', name: 'Name', type: 'text' }]),
      'its date column Due was deleted',
    ],
    [
      'date column changed type',
      { condition: 'near_deadline', date_column_name: 'Due' },
      docWith([{ key: 'due', name: 'Due', type: 'text' }]),
      'its date column Due is no longer a date column',
    ],
    ['watched column deleted', { watch_all_columns: false, column_keys: ['prio'] }, docWith([{ key: 'name', name: 'Name', type: 'text' }]), 'the watched column prio was deleted'],
    [
      'filter column deleted',
      { condition: 'filters_satisfy', filters: [{ column_key: 'prio', filter_predicate: 'greater', filter_term: 1 }] },
      docWith([{ key: 'name', name: 'Name', type: 'text' }]),
      'its filters no longer fit table Tasks: column prio not found',
    ],
    [
      'filter column changed type',
      { condition: 'filters_satisfy', filters: [{ column_key: 'prio', filter_predicate: 'greater', filter_term: 1 }] },
      docWith([{ key: 'prio', name: 'Priority', type: 'checkbox' }]),
      "its filters no longer fit table Tasks: Filter on Priority invalid: checkbox type column 'Priority' does not support 'greater', available predicates are ['is']",
    ],
  ])('%s', (_label, trigger, doc, reason) => {
    expect(prepareRule(rule(trigger), doc, members)).toEqual({ ok: false, reason });
  });

  it('a listed user without access', () => {
    const stranger = 'f'.repeat(32) + '@auth.local';
    expect(prepareRule(rule({}, { users: [BOB, stranger] }), full, members)).toEqual({
      ok: false,
      reason: `user ${stranger} no longer has access to the base`,
    });
  });

  it('a deleted users_column_key column is not a reason (the cell simply names nobody)', () => {
    expect(prepareRule(rule({}, { users_column_key: 'gone' }), full, members).ok).toBe(true);
  });

  it('compiles the view filters and flags broken ones', () => {
    const views = [
      { _id: 'v1', name: 'V', filters: [{ column_key: 'prio', filter_predicate: 'greater', filter_term: 1 }], filter_conjunction: 'And' },
    ];
    const ok = prepareRule(rule({}), docWith([{ key: 'prio', name: 'Priority', type: 'number' }], views), members);
    expect(ok.ok && ok.prepared.viewFilter !== null && !ok.prepared.viewFilterBroken).toBe(true);
    const broken = prepareRule(rule({}), docWith([{ key: 'name', name: 'Name', type: 'text' }], views), members);
    expect(broken.ok && broken.prepared.viewFilterBroken).toBe(true);
  });
});
