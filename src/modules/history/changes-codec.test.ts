import { describe, expect, it } from 'vitest';
import { COMPRESS_ABOVE, decodeChanges, encodeChanges, packChanges, parseChanges, storedChanges } from './changes-codec.js';
import type { LoggedChanges } from './history.types.js';

describe('operation log changes codec', () => {
  it('keeps small changes as JSON and compresses large ones, both read back the same', () => {
    const small = JSON.stringify({ rows: [{ o: 'modify_row', t: '0000', r: 'a', n: 'x', a: { '0000': 'new' }, b: { '0000': 'old' } }] });
    expect(encodeChanges(small)).toBe(small);
    const large = JSON.stringify({ rows: Array.from({ length: 200 }, (_, i) => ({ o: 'delete_row', t: '0000', r: `row${i}`, n: 'name', b: { '0000': 'some text '.repeat(5) } })) });
    expect(large.length).toBeGreaterThan(COMPRESS_ABOVE);
    const packed = encodeChanges(large);
    expect(packed.startsWith('z:')).toBe(true);
    expect(packed.length).toBeLessThan(large.length / 5);
    expect(decodeChanges(packed)).toBe(large);
    expect(decodeChanges(small)).toBe(small);
  });

  it('stores incompressible large changes as they are', () => {
    const random = JSON.stringify({ rows: [{ o: 'insert_row', t: '0000', r: 'a', n: '', a: { '0000': Buffer.from(Array.from({ length: 6000 }, () => Math.floor(Math.random() * 256))).toString('base64') } }] });
    const stored = encodeChanges(random);
    expect(decodeChanges(stored)).toBe(random);
    expect(stored.length).toBeLessThanOrEqual(random.length);
  });

  it('stores the kind and table of a one-kind, one-table write once and reads every row change back whole', () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({ o: 'insert_row' as const, t: 'Tb01', r: `row${i}`, n: `name ${i}`, a: { '0000': `name ${i}`, '0001': i } }));
    const full = JSON.stringify({ rows });
    const stored = packChanges({ rows });
    expect(decodeChanges(stored).length).toBeLessThan(full.length * 0.8);
    expect(parseChanges(stored)).toEqual({ rows });
    const small: LoggedChanges = { rows: [{ o: 'modify_row', t: 'Tb01', r: 'a', n: 'x', a: { '0000': 'new' }, b: { '0000': 'old' } }], structure: [{ op_type: 'insert_column' }] };
    expect(parseChanges(packChanges(small))).toEqual(small);
  });

  it('keeps mixed writes, structure-only writes and the stored form before packing readable', () => {
    const mixed: LoggedChanges = {
      rows: [
        { o: 'insert_row', t: 'Tb01', r: 'a', n: 'x', a: { '0000': 'x' } },
        { o: 'delete_row', t: 'Tb01', r: 'b', n: 'y', b: { '0000': 'y' }, c: ['u@auth.local', 5] },
        { o: 'add_link', t: 'Tb02', r: 'c', n: 'z', a: { '0003': ['a'] }, b: { '0003': [] } },
      ],
    };
    expect(parseChanges(packChanges(mixed))).toEqual(mixed);
    expect(parseChanges(packChanges({ rows: [], structure: [{ op_type: 'add_table' }] }))).toEqual({ rows: [], structure: [{ op_type: 'add_table' }] });
    const before = JSON.stringify(mixed);
    expect(parseChanges(before)).toEqual(mixed);
    expect(parseChanges(encodeChanges(JSON.stringify({ rows: Array(100).fill(mixed.rows[0]) })))).toEqual({ rows: Array(100).fill(mixed.rows[0]) });
  });

  it('stores the operation log\'s forms compressed or, for PostgreSQL (the server compresses), as JSON; both read back whole', () => {
    const rows = Array.from({ length: 300 }, (_, i) => ({ r: `row${i}`, n: `name ${i}`, a: { '0000': `name ${i}` } }));
    const whole = { rows: rows.map((c) => ({ o: 'insert_row' as const, t: 'Tb01', ...c })) };
    const compressed = storedChanges({ shared: { o: 'insert_row', t: 'Tb01', rows } }, true);
    const plain = storedChanges({ shared: { o: 'insert_row', t: 'Tb01', rows } }, false);
    expect(compressed.startsWith('z:')).toBe(true);
    expect(plain.startsWith('{')).toBe(true);
    expect(parseChanges(compressed)).toEqual(whole);
    expect(parseChanges(plain)).toEqual(whole);
    expect(parseChanges(storedChanges({ plain: whole }, true))).toEqual(whole);
  });

  it('stores an append of new rows as two arrays (compressed only when the names are the larger part) and reads it back as rows', () => {
    const ids = Array.from({ length: 300 }, (_, i) => `id${String(i).padStart(20, '0')}`);
    const appended = { o: 'insert_row' as const, t: '0000', f: 1 as const, ids, names: ids.map((_, i) => `row ${i}`) };
    const stored = storedChanges({ appended }, true);
    expect(JSON.parse(stored)).toEqual(appended);
    expect(parseChanges(stored).rows[7]).toEqual({ o: 'insert_row', t: '0000', f: 1, r: ids[7], n: 'row 7' });
    const long = storedChanges({ appended: { ...appended, names: ids.map(() => 'a long first column '.repeat(5)) } }, true);
    expect(long.startsWith('z:')).toBe(true);
    expect(parseChanges(long).rows).toHaveLength(300);
  });
});
