import { describe, expect, it } from 'vitest';
import { rowKey } from './row-key.js';

describe('rowKey', () => {
  it('is a stable, safe, non-negative integer (stored keys must never change)', () => {
    expect(rowKey('R')).toBe(rowKey('R'));
    expect(rowKey('')).toBe(3338908027751811);
    expect(rowKey('Ab3dE5gH7jK9mN1pQ3sT5v')).toBe(rowKey('Ab3dE5gH7jK9mN1pQ3sT5v'));
    for (const id of ['a', 'b', 'row7', 'Ab3dE5gH7jK9mN1pQ3sT5v']) {
      expect(Number.isSafeInteger(rowKey(id))).toBe(true);
      expect(rowKey(id)).toBeGreaterThanOrEqual(0);
    }
  });

  it('spreads 100,000 row ids without a collision', () => {
    const keys = new Set<number>();
    for (let i = 0; i < 100_000; i++) keys.add(rowKey(`row${i.toString(36).padStart(20, '0')}`));
    expect(keys.size).toBe(100_000);
  });
});
