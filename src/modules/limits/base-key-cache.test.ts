import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import { notFound } from '../../shared/errors.js';
import type { BaseAccess } from '../access/index.js';
import { BASE_KEY_TTL_MS, BaseKeyCache, MISSING_BASE_TTL_MS } from './base-key-cache.js';

/** A BaseAccess stand-in over a name → uuid map that counts lookups. */
function fakeAccess(bases: Map<string, string>, failWith?: Error) {
  const calls: string[] = [];
  const access = {
    async find(workspaceId: number, baseName: string) {
      calls.push(`${workspaceId}/${baseName}`);
      if (failWith) throw failWith;
      const uuid = bases.get(`${workspaceId}/${baseName}`);
      if (!uuid) throw notFound(`dtable ${baseName} not found.`);
      return { uuid };
    },
  } as unknown as BaseAccess;
  return { access, calls };
}

describe('BaseKeyCache', () => {
  it('looks a base up once per TTL and follows a rename after it', async () => {
    const bases = new Map([['1/a', 'uuid-a']]);
    const { access, calls } = fakeAccess(bases);
    const clock = new ManualClock();
    const cache = new BaseKeyCache(access, clock);
    expect(await cache.uuidOf({ workspaceId: 1, baseName: 'a' })).toBe('uuid-a');
    expect(cache.uuidOf({ workspaceId: 1, baseName: 'a' })).toBe('uuid-a'); // synchronous hit
    expect(calls).toEqual(['1/a']);

    bases.delete('1/a');
    bases.set('1/b', 'uuid-a'); // renamed a → b
    expect(await cache.uuidOf({ workspaceId: 1, baseName: 'b' })).toBe('uuid-a');
    clock.advance(BASE_KEY_TTL_MS - 1);
    expect(cache.uuidOf({ workspaceId: 1, baseName: 'a' })).toBe('uuid-a'); // stale old name, within the TTL
    clock.advance(1);
    expect(await cache.uuidOf({ workspaceId: 1, baseName: 'a' })).toBeNull();
    expect(calls).toEqual(['1/a', '1/b', '1/a']);
  });

  it('remembers an unknown base for a shorter time', async () => {
    const bases = new Map<string, string>();
    const { access, calls } = fakeAccess(bases);
    const clock = new ManualClock();
    const cache = new BaseKeyCache(access, clock);
    expect(await cache.uuidOf({ workspaceId: 2, baseName: 'new' })).toBeNull();
    bases.set('2/new', 'uuid-new');
    clock.advance(MISSING_BASE_TTL_MS - 1);
    expect(cache.uuidOf({ workspaceId: 2, baseName: 'new' })).toBeNull();
    clock.advance(1);
    expect(await cache.uuidOf({ workspaceId: 2, baseName: 'new' })).toBe('uuid-new');
    expect(calls).toHaveLength(2);
  });

  it('shares one lookup between concurrent requests', async () => {
    const { access, calls } = fakeAccess(new Map([['3/x', 'uuid-x']]));
    const cache = new BaseKeyCache(access, new ManualClock());
    const results = await Promise.all([1, 2, 3].map(() => cache.uuidOf({ workspaceId: 3, baseName: 'x' })));
    expect(results).toEqual(['uuid-x', 'uuid-x', 'uuid-x']);
    expect(calls).toEqual(['3/x']);
  });

  it('answers null (count per IP) when the database fails', async () => {
    const { access } = fakeAccess(new Map(), new Error('connection refused'));
    const cache = new BaseKeyCache(access, new ManualClock());
    expect(await cache.uuidOf({ workspaceId: 4, baseName: 'y' })).toBeNull();
  });

  it('stays within its size by dropping the oldest entry', async () => {
    const bases = new Map([
      ['5/a', 'ua'],
      ['5/b', 'ub'],
      ['5/c', 'uc'],
    ]);
    const { access, calls } = fakeAccess(bases);
    const cache = new BaseKeyCache(access, new ManualClock(), 2);
    for (const name of ['a', 'b', 'c']) await cache.uuidOf({ workspaceId: 5, baseName: name });
    expect(cache.uuidOf({ workspaceId: 5, baseName: 'c' })).toBe('uc');
    expect(cache.uuidOf({ workspaceId: 5, baseName: 'b' })).toBe('ub');
    expect(await cache.uuidOf({ workspaceId: 5, baseName: 'a' })).toBe('ua'); // evicted: looked up again
    expect(calls).toEqual(['5/a', '5/b', '5/c', '5/a']);
  });
});
