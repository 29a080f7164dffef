import { describe, expect, it } from 'vitest';
import { BaseSnapshots } from './base-snapshots.js';

/**
 * A fake database answering the revision query from `revisions` (and counting the queries), so
 * the cache's decisions (hit, rebuild, torn build, eviction) can be driven step by step.
 */
function fakeDb(revisions: Map<number, number>, counter = { queries: 0 }) {
  const query = { select: () => query, where: () => query, compile: () => ({ sql: 'revision of', parameters: [0] }) };
  return {
    // Not PostgreSQL's adapter: the revision is the metadata's counter alone (db/base-revision.ts).
    getExecutor: () => ({ adapter: {} }),
    selectFrom: () => query,
    executeQuery: async ({ parameters: [id] }: { parameters: [number] }) => {
      counter.queries += 1;
      return { rows: revisions.has(id) ? [{ revision: revisions.get(id)! }] : [] };
    },
  } as never;
}

const base = (id: number) => ({ id, uuid: `uuid-${id}` });

describe('BaseSnapshots', () => {
  it('builds once per revision and rebuilds after the revision moves', async () => {
    const revisions = new Map([[1, 5]]);
    let builds = 0;
    const cache = new BaseSnapshots(fakeDb(revisions), async () => ({ build: ++builds }));
    const first = await cache.get(base(1));
    expect(JSON.parse(first.body.toString())).toEqual({ build: 1 });
    expect(first.revision).toBe(5);
    expect((await cache.get(base(1))).body).toBe(first.body);
    expect(builds).toBe(1);

    revisions.set(1, 6);
    const second = await cache.get(base(1));
    expect(JSON.parse(second.body.toString())).toEqual({ build: 2 });
    expect(second.revision).toBe(6);
  });

  it('never keeps a build that a write raced, and builds again', async () => {
    const revisions = new Map([[1, 1]]);
    let builds = 0;
    const cache = new BaseSnapshots(fakeDb(revisions), async () => {
      builds += 1;
      if (builds === 1) revisions.set(1, 2); // a write commits while the first build reads
      return { build: builds };
    });
    const snapshot = await cache.get(base(1));
    expect(snapshot).toMatchObject({ revision: 2 });
    expect(JSON.parse(snapshot.body.toString())).toEqual({ build: 2 });
    await cache.get(base(1));
    expect(builds).toBe(2);
  });

  it('serves but does not keep a build that keeps racing writes', async () => {
    const revisions = new Map([[1, 1]]);
    let builds = 0;
    const cache = new BaseSnapshots(fakeDb(revisions), async () => {
      revisions.set(1, revisions.get(1)! + 1);
      return { build: ++builds };
    });
    expect(JSON.parse((await cache.get(base(1))).body.toString())).toEqual({ build: 3 });
    expect(cache.stats.entries).toBe(0);
  });

  it('answers 404 for a base that is gone, and forgets it', async () => {
    const revisions = new Map([[1, 1]]);
    const cache = new BaseSnapshots(fakeDb(revisions), async () => ({}));
    await cache.get(base(1));
    revisions.delete(1);
    await expect(cache.get(base(1))).rejects.toMatchObject({ statusCode: 404 });
    expect(cache.stats).toEqual({ entries: 0, bytes: 0 });
  });

  it('skips the revision query while no other connection has committed, and confirms it once one has', async () => {
    const revisions = new Map([[1, 1]]);
    const counter = { queries: 0 };
    let externalChanges = 7;
    let now = 0;
    let builds = 0;
    const cache = new BaseSnapshots(fakeDb(revisions, counter), async () => ({ build: ++builds }), {
      externalChanges: () => externalChanges,
      monotonicNow: () => now,
    });
    await cache.get(base(1));
    const afterBuild = counter.queries;
    for (let i = 0; i < 5; i++) {
      now += 5;
      await cache.get(base(1));
    }
    expect(counter.queries).toBe(afterBuild);

    externalChanges = 8; // another process committed something, not to this base
    now += 5;
    await cache.get(base(1));
    expect(counter.queries).toBe(afterBuild + 1);
    expect(builds).toBe(1);
    now += 5;
    await cache.get(base(1));
    expect(counter.queries).toBe(afterBuild + 1); // confirmed at 8: no query again

    externalChanges = 9; // another process wrote this base
    revisions.set(1, 2);
    now += 5;
    expect(JSON.parse((await cache.get(base(1))).body.toString())).toEqual({ build: 2 });
  });

  it('asks externalChanges at most once per externalChangesEveryMs', async () => {
    const revisions = new Map([[1, 1]]);
    let asked = 0;
    let externalChanges = 1;
    let now = 100;
    const cache = new BaseSnapshots(fakeDb(revisions), async () => ({ revision: revisions.get(1) }), {
      externalChanges: () => (asked++, externalChanges),
      externalChangesEveryMs: 1,
      monotonicNow: () => now,
    });
    await cache.get(base(1));
    const first = asked;
    for (let i = 0; i < 10; i++) expect(cache.cached(base(1))).toBeDefined();
    expect(asked).toBe(first); // all within the same millisecond

    externalChanges = 2; // another process wrote the base ...
    revisions.set(1, 2);
    now += 0.5;
    expect(cache.cached(base(1))?.revision).toBe(1); // ... unseen for less than the interval
    now += 0.5;
    expect(cache.cached(base(1))).toBeUndefined(); // seen once it has passed
    expect((await cache.get(base(1))).revision).toBe(2);
  });

  it('drops a base evicted by a local write, and never keeps a build that such a write raced', async () => {
    const revisions = new Map([[1, 1]]);
    let builds = 0;
    let duringBuild: (() => void) | null = null;
    const cache = new BaseSnapshots(fakeDb(revisions), async () => {
      duringBuild?.();
      return { build: ++builds };
    }, { externalChanges: () => 1 });
    await cache.get(base(1));
    cache.evict(1);
    expect(cache.stats.entries).toBe(0);

    // A local write commits and evicts while a build runs; the revision it bumps is read only later.
    duringBuild = () => {
      duringBuild = null;
      cache.evict(1);
    };
    // The raced build (2) is not kept: it is built again (3), and that one is.
    expect(JSON.parse((await cache.get(base(1))).body.toString())).toEqual({ build: 3 });
    expect(cache.stats.entries).toBe(1);
    await cache.get(base(1));
    expect(builds).toBe(3);
  });

  it("keeps a build while other bases are written, however busy they are", async () => {
    const revisions = new Map([[1, 1], [2, 1]]);
    let builds = 0;
    let cache: BaseSnapshots;
    cache = new BaseSnapshots(fakeDb(revisions), async (b) => {
      if (b.id === 1) {
        revisions.set(2, revisions.get(2)! + 1);
        cache.evict(2); // a local write to base 2 commits while base 1 is built
      }
      return { build: ++builds };
    }, { externalChanges: () => 1 });
    await cache.get(base(1));
    await cache.get(base(1));
    expect(builds).toBe(1);
    expect(cache.stats.entries).toBe(1);
  });

  it('stays within its byte budget, dropping the least recently used base first', async () => {
    const revisions = new Map([[1, 1], [2, 1], [3, 1]]);
    const payload = 'x'.repeat(90);
    const cache = new BaseSnapshots(fakeDb(revisions), async (b) => ({ id: b.id, payload }), { maxBytes: 250, maxEntryBytes: 200 });
    await cache.get(base(1));
    await cache.get(base(2));
    await cache.get(base(1)); // 1 is now the most recently used
    await cache.get(base(3)); // over budget: 2 goes
    expect(cache.stats.entries).toBe(2);
    expect(cache.stats.bytes).toBeLessThanOrEqual(250);
    let builds = 0;
    const counting = new BaseSnapshots(fakeDb(revisions), async () => ({ n: ++builds, payload: 'y'.repeat(300) }), { maxBytes: 1000, maxEntryBytes: 200 });
    await counting.get(base(1));
    await counting.get(base(1));
    expect(builds).toBe(2); // above maxEntryBytes: served, never kept
    expect(counting.stats.entries).toBe(0);
  });
});

/** A fake revision channel (db/revision-channel.ts) driven by the test: listening or not, and its notifications. */
function fakeChannel() {
  const listeners: Array<(baseId: number) => void> = [];
  const channel = {
    isListening: true,
    generation: 1,
    syncs: 0,
    /** What the next sync answers; undefined models a lost or stalled connection. */
    syncAnswer: (): number | undefined => channel.generation,
    onChange: (listener: (baseId: number) => void) => void listeners.push(listener),
    sync: async () => {
      channel.syncs += 1;
      return channel.isListening ? channel.syncAnswer() : undefined;
    },
    notify: (baseId: number) => listeners.forEach((listener) => listener(baseId)),
  };
  return channel;
}

describe('BaseSnapshots with a revision channel (PostgreSQL)', () => {
  it('serves a body confirmed while listening without a revision query, and rebuilds after a notification', async () => {
    const revisions = new Map([[1, 1]]);
    const counter = { queries: 0 };
    const channel = fakeChannel();
    let builds = 0;
    const cache = new BaseSnapshots(fakeDb(revisions, counter), async () => ({ build: ++builds }), { revisionChanges: channel });
    await cache.get(base(1));
    const afterBuild = counter.queries;
    for (let i = 0; i < 3; i++) expect(JSON.parse((await cache.get(base(1))).body.toString())).toEqual({ build: 1 });
    expect(counter.queries).toBe(afterBuild);
    expect(channel.syncs).toBe(3);

    revisions.set(1, 2);
    channel.notify(1); // another instance's write committed
    expect(JSON.parse((await cache.get(base(1))).body.toString())).toEqual({ build: 2 });
    expect(counter.queries).toBeGreaterThan(afterBuild);
  });

  it('asks the database while the channel is down or a sync fails, and again after a reconnect', async () => {
    const revisions = new Map([[1, 1]]);
    const counter = { queries: 0 };
    const channel = fakeChannel();
    let builds = 0;
    const cache = new BaseSnapshots(fakeDb(revisions, counter), async () => ({ build: ++builds }), { revisionChanges: channel });
    await cache.get(base(1));

    channel.syncAnswer = () => undefined; // the sync found the connection lost
    let before = counter.queries;
    await cache.get(base(1));
    expect(counter.queries).toBe(before + 1);

    channel.isListening = false;
    channel.generation = 2;
    revisions.set(1, 2); // a write whose notification was missed while down
    before = counter.queries;
    expect(JSON.parse((await cache.get(base(1))).body.toString())).toEqual({ build: 2 });
    expect(counter.queries).toBeGreaterThan(before);

    // Listening again in a new generation: the body confirmed while down is confirmed once more by query.
    channel.isListening = true;
    channel.generation = 3;
    channel.syncAnswer = () => channel.generation;
    before = counter.queries;
    await cache.get(base(1));
    expect(counter.queries).toBe(before + 1);
    before = counter.queries;
    expect(JSON.parse((await cache.get(base(1))).body.toString())).toEqual({ build: 2 });
    expect(counter.queries).toBe(before); // now on the channel
    expect(builds).toBe(2);
  });

  it('does not serve a body whose notification arrived while the sync was on its way', async () => {
    const revisions = new Map([[1, 1]]);
    const channel = fakeChannel();
    let builds = 0;
    const cache = new BaseSnapshots(fakeDb(revisions), async () => ({ build: ++builds }), { revisionChanges: channel });
    await cache.get(base(1));
    channel.syncAnswer = () => {
      revisions.set(1, 2);
      channel.notify(1); // delivered before the sync's answer
      return channel.generation;
    };
    expect(JSON.parse((await cache.get(base(1))).body.toString())).toEqual({ build: 2 });
  });
});
