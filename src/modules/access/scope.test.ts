import { describe, expect, it } from 'vitest';
import { imposeView, inNetworks, isUnscoped, namedOutsideScope, parseNetwork, scopeRefusal, scopeTableIds, tableInScope, viewShareScope } from './scope.js';

describe('token scope policy', () => {
  it('an absent scope or dimension restricts nothing', () => {
    expect(scopeRefusal(undefined, { operations: ['sql'], tables: ['x'], allTables: true })).toBeNull();
    expect(scopeRefusal({ operations: ['sql'] }, { operations: ['sql'], tables: ['any'] })).toBeNull();
    expect(isUnscoped({})).toBe(true);
    expect(isUnscoped({ tables: ['a'] })).toBe(false);
  });

  it.each([
    [{ operations: ['read_rows' as const] }, { operations: ['write_rows' as const] }, /operation write_rows/],
    [{ operations: ['read_rows' as const] }, { operations: ['read_rows' as const, 'structure' as const] }, null],
    [{ tables: ['A'] }, { operations: ['read_rows' as const], tables: ['A', 'B'] }, /table B/],
    [{ tables: ['A'] }, { tables: [] }, null],
    [{ tables: ['A'] }, { allTables: true }, /every table/],
    [{ networks: ['10.0.0.0/8'] }, { ip: '10.2.3.4' }, null],
    [{ networks: ['10.0.0.0/8'] }, { ip: '::ffff:10.2.3.4' }, null],
    [{ networks: ['10.0.0.0/8'] }, { ip: '11.0.0.1' }, /11\.0\.0\.1/],
    [{ networks: ['10.0.0.0/8'] }, {}, /allowed networks/],
    [{ operations: ['sql' as const] }, {}, null], // the exchange asks no operation
  ])('%j for %j', (scope, need, refusal) => {
    const answer = scopeRefusal(scope, need);
    if (refusal === null) expect(answer).toBeNull();
    else expect(answer).toMatch(refusal);
  });

  it('parses CIDR and single addresses, refusing malformed ones', () => {
    expect(parseNetwork('192.0.2.0/24')).toEqual({ address: '192.0.2.0', prefix: 24, family: 'ipv4' });
    expect(parseNetwork('2001:db8::1')).toEqual({ address: '2001:db8::1', prefix: 128, family: 'ipv6' });
    for (const bad of ['10.0.0.0/33', '10.0.0.0/', 'x/8', '10.0.0.0/8/1', '::/129', '10.0.0.0/0x1']) expect(parseNetwork(bad)).toBeNull();
    expect(inNetworks(['2001:db8::/32'], '2001:db8:1::5')).toBe(true);
    expect(inNetworks(['2001:db8::/32'], 'not an ip')).toBe(false);
  });
});

describe('view-share scope', () => {
  const scope = viewShareScope('T1', 'V1', 'r');

  it('admits row listings of its table on routes open to views, and nothing else', () => {
    expect(scopeRefusal(scope, { operations: ['read_rows'], viewOpen: true })).toBeNull();
    expect(scopeRefusal(scope, { tables: ['T1'] })).toBeNull();
    expect(scopeRefusal(scope, { tables: ['T2'] })).toContain('T2');
    expect(scopeRefusal(scope, { operations: ['read_rows'], viewOpen: false })).toContain('one view');
    // SQL on the routes open to views (limited to the view there: sql/view-source.ts); never structure.
    expect(scopeRefusal(scope, { operations: ['sql'], viewOpen: true })).toBeNull();
    expect(scopeRefusal(scope, { operations: ['sql'], viewOpen: false })).toContain('one view');
    expect(scopeRefusal(scope, { operations: ['structure'], viewOpen: true })).toContain('structure');
    expect(scopeRefusal(scope, { operations: ['files'] })).toContain('files');
    expect(scopeRefusal(scope, { operations: ['write_rows'], viewOpen: true })).toContain('write_rows');
    // The base's live room is every table (a view's holder joins a room of its own instead).
    expect(scopeRefusal(scope, { operations: ['read_rows'], allTables: true })).toContain('live channel');
    expect(scopeRefusal(viewShareScope('T1', 'V1', 'rw'), { operations: ['write_rows'], viewOpen: true })).toBeNull();
  });

  it('imposes its view on a listing, replacing names', () => {
    expect(imposeView(scope, { table_name: 'People', view_name: 'Other', limit: 5 } as never)).toEqual({ table_id: 'T1', view_id: 'V1', limit: 5 });
    expect(imposeView(undefined, { table_name: 'People' })).toBeNull();
    expect(isUnscoped(scope)).toBe(false);
  });

  it('resolves a table scope by id or by name', () => {
    const tables = [
      { _id: 'aaaa', name: 'A' },
      { _id: 'bbbb', name: 'B' },
    ];
    expect(tableInScope(undefined, tables[1]!)).toBe(true);
    expect(tableInScope({ tables: ['A'] }, tables[0]!)).toBe(true);
    expect(tableInScope({ tables: ['aaaa'] }, tables[1]!)).toBe(false);
    expect(scopeTableIds({ operations: ['sql'] }, tables)).toBeUndefined();
    expect(scopeTableIds({ tables: ['A'] }, tables)).toEqual(['aaaa']);
    expect(namedOutsideScope({ tables: ['A'] }, ['aaaa', 'A', 'bbbb', 'nope'], tables)).toEqual(['bbbb', 'nope']);
    expect(namedOutsideScope({ tables: ['aaaa'] }, ['A'], tables)).toEqual([]);
  });
});
