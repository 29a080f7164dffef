import { describe, expect, it } from 'vitest';
import { ListingPositions } from './listing-positions.js';

describe('ListingPositions', () => {
  it('answers the nearest known position at or before a start, at the same revision only', () => {
    const p = new ListingPositions();
    p.learn('a', 1, 7, 100, 150, [3, 'x']);
    p.learn('a', 1, 7, 200, 260, [5, 'y']);
    expect(p.nearest('a', 1, 7, 250)).toEqual({ position: 200, afterId: 260, values: [5, 'y'] });
    expect(p.nearest('a', 1, 7, 199)).toEqual({ position: 100, afterId: 150, values: [3, 'x'] });
    expect(p.nearest('a', 1, 7, 99)).toEqual({ position: 0, afterId: 0 });
    expect(p.nearest('a', 1, 8, 250)).toEqual({ position: 0, afterId: 0 });
    // A new revision starts the listing over.
    p.learn('a', 1, 8, 50, 60);
    expect(p.nearest('a', 1, 8, 250)).toEqual({ position: 50, afterId: 60 });
    expect(p.stats.positions).toBe(1);
  });

  it('keeps within its byte bound, dropping the least recently used listings first', () => {
    const p = new ListingPositions(20_000);
    for (let i = 0; i < 1000; i++) p.learn(`listing ${i}`, 1, 1, 100, i, ['v'.repeat(100)]);
    expect(p.stats.bytes).toBeLessThanOrEqual(20_000);
    expect(p.stats.bytes).toBeGreaterThan(10_000);
    expect(p.nearest('listing 999', 1, 1, 100).afterId).toBe(999);
    expect(p.nearest('listing 0', 1, 1, 100).position).toBe(0);
    // Replacing a position and moving to a new revision keep the count exact: back to zero when all go.
    const q = new ListingPositions(1_000_000);
    q.learn('x', 1, 1, 10, 1, ['a']);
    q.learn('x', 1, 1, 10, 2, ['bbb']);
    q.learn('x', 1, 2, 10, 3);
    const one = q.stats.bytes;
    q.learn('y', 1, 1, 10, 3);
    expect(q.stats.bytes).toBe(2 * one);
  });
});
