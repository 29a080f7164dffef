import { describe, expect, it } from 'vitest';
import { COMPRESS_ABOVE, decodeChanges, encodeChanges } from './changes-codec.js';

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
});
