import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import { TtlCache } from './ttl-cache.js';

const counting = <V>(value: V) => {
  const load = async () => {
    load.calls += 1;
    return value;
  };
  load.calls = 0;
  return load;
};

describe('TtlCache', () => {
  it('loads once and serves from memory until the TTL passes', async () => {
    const clock = new ManualClock();
    const cache = new TtlCache<string, number>(clock, 1000);
    const load = counting(7);
    expect(await cache.get('k', load)).toBe(7);
    clock.advance(999);
    expect(await cache.get('k', load)).toBe(7);
    expect(load.calls).toBe(1);
    clock.advance(1);
    expect(await cache.get('k', load)).toBe(7);
    expect(load.calls).toBe(2);
  });

  it('does not store undefined or what keep() refuses', async () => {
    const cache = new TtlCache<string, number | undefined>(new ManualClock(), 1000);
    const missing = counting<number | undefined>(undefined);
    await cache.get('a', missing);
    await cache.get('a', missing);
    expect(missing.calls).toBe(2);
    const refused = counting<number | undefined>(-1);
    await cache.get('b', refused, (v) => v !== -1);
    await cache.get('b', refused, (v) => v !== -1);
    expect(refused.calls).toBe(2);
    expect(cache.size).toBe(0);
  });

  it('evict and clear force a reload', async () => {
    const cache = new TtlCache<string, number>(new ManualClock(), 1000);
    const load = counting(1);
    await cache.get('a', load);
    cache.evict('a');
    await cache.get('a', load);
    cache.clear();
    await cache.get('a', load);
    expect(load.calls).toBe(3);
  });

  it('never stores a value loaded before an eviction (a revocation cannot be undone by a slow read)', async () => {
    const cache = new TtlCache<string, number>(new ManualClock(), 1000);
    let release!: (v: number) => void;
    const slow = cache.get('k', () => new Promise<number>((resolve) => (release = resolve)));
    cache.evict('k');
    cache.set('k', 2); // the revocation's new version
    release(1); // the stale read finishes afterwards
    expect(await slow).toBe(1);
    expect(await cache.get('k', async () => 99)).toBe(2);
  });

  it('keeps at most maxEntries, dropping the oldest', async () => {
    const cache = new TtlCache<number, number>(new ManualClock(), 1000, 3);
    for (let i = 0; i < 5; i++) cache.set(i, i);
    expect(cache.size).toBe(3);
    const reload = counting(-1);
    expect(await cache.get(0, reload)).toBe(-1);
    expect(await cache.get(4, reload)).toBe(4);
    expect(reload.calls).toBe(1);
  });
});
