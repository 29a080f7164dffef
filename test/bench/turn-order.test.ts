import { describe, expect, it } from 'vitest';
import { turnOrder } from '../../bench/lib/turn-order.js';

/** The paired benches' turn order (bench/lib/turn-order.ts): every arm follows every other arm alike. */
describe('turnOrder', () => {
  it('gives one arm, or two alternating, as they are', () => {
    expect(turnOrder(0)).toEqual([]);
    expect(turnOrder(1)).toEqual([0]);
    expect(turnOrder(2)).toEqual([0, 1]);
  });

  it.each([3, 4, 5, 7])('lets each of %i arms follow every other arm exactly once per cycle, and never itself', (n) => {
    const order = turnOrder(n);
    expect(order).toHaveLength(n * (n - 1));
    const follows = new Map<string, number>();
    order.forEach((arm, i) => {
      const before = order[(i + order.length - 1) % order.length]!; // a cycle: the first follows the last
      expect(arm).not.toBe(before);
      follows.set(`${before}>${arm}`, (follows.get(`${before}>${arm}`) ?? 0) + 1);
    });
    expect(follows.size).toBe(n * (n - 1));
    expect([...follows.values()].every((count) => count === 1)).toBe(true);
    for (let arm = 0; arm < n; arm += 1) expect(order.filter((a) => a === arm)).toHaveLength(n - 1);
  });

  it('differs from the rotation by one per turn it replaces, where a control followed its own app', () => {
    // The rotation for three arms, one cycle of it: turns 0 1 2 | 1 2 0 | 2 0 1.
    const rotation = [0, 1, 2, 1, 2, 0, 2, 0, 1];
    const pairs = (order: number[]) => order.map((arm, i) => `${order[(i + order.length - 1) % order.length]}>${arm}`);
    const count = (order: number[], pair: string) => pairs(order).filter((p) => p === pair).length;
    // In the rotation, arm 1 (the control) follows arm 0 (`off`) twice as often as arm 2 (scoped) does.
    expect(count(rotation, '0>1')).toBe(2 * count(rotation, '0>2'));
    const order = turnOrder(3);
    expect(count(order, '0>1')).toBe(count(order, '0>2'));
  });
});
