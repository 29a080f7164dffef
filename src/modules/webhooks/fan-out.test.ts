import { describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../events/index.js';
import { boundFanOut } from './webhooks.consumer.js';

const events = (bases: number[]) => bases.map((baseId, i) => ({ id: i + 1, baseId }) as ChangeEvent);

describe('boundFanOut (deliveries per dispatcher transaction)', () => {
  const hooks = [{ base_id: 1 }, { base_id: 1 }, { base_id: 1 }, { base_id: 2 }];

  it('keeps the longest prefix whose deliveries (webhooks of each event base) stay within the bound', () => {
    // Base 1 has three webhooks, base 2 one: 3 + 1 + 3 = 7 > 6.
    expect(boundFanOut(events([1, 2, 1, 2]), hooks, 6).map((e) => e.id)).toEqual([1, 2]);
    expect(boundFanOut(events([1, 2, 1, 2]), hooks, 8).map((e) => e.id)).toEqual([1, 2, 3, 4]);
  });

  it('counts events of bases without webhooks as free and always keeps the first event', () => {
    expect(boundFanOut(events([3, 3, 3]), hooks, 1).map((e) => e.id)).toEqual([1, 2, 3]);
    expect(boundFanOut(events([1, 1]), hooks, 2).map((e) => e.id)).toEqual([1]);
  });
});
