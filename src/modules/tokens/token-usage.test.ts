import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Db } from '../../db/index.js';
import { ManualClock } from '../../shared/clock.js';
import { TokenUsage } from './token-usage.js';

const written = vi.hoisted(() => [] as Array<{ counts: Array<{ tokenId: number; day: string; requests: number }>; ips: Map<number, string> }>);
vi.mock('./tokens.repository.js', () => ({
  addUsage: async (_db: unknown, counts: Array<{ tokenId: number; day: string; requests: number }>, ips: Map<number, string>) => {
    written.push({ counts: counts.map((c) => ({ ...c })), ips: new Map(ips) });
  },
}));

/** The per-call count keeps today's entry by token id: every count must still reach exactly one batch. */
describe('TokenUsage', () => {
  let clock: ManualClock;
  let usage: TokenUsage;
  beforeEach(() => {
    written.length = 0;
    clock = new ManualClock(Date.UTC(2026, 0, 5, 23, 59, 0));
    usage = new TokenUsage({} as Db, clock);
  });

  it('counts each use once, across flushes and a change of day', async () => {
    usage.record(1, '10.0.0.1');
    usage.record(1, '10.0.0.1');
    usage.record(2, '10.0.0.2');
    await usage.flush();
    // After a flush the next use starts a new count (the flushed one is not incremented again).
    usage.record(1, '10.0.0.3');
    await usage.flush();
    usage.record(1, undefined);
    clock.advance(120_000); // past midnight UTC
    usage.record(1, '10.0.0.1');
    usage.record(1, '10.0.0.1');
    await usage.flush();
    expect(written.map((w) => w.counts)).toEqual([
      [
        { tokenId: 1, day: '2026-01-05', requests: 2 },
        { tokenId: 2, day: '2026-01-05', requests: 1 },
      ],
      [{ tokenId: 1, day: '2026-01-05', requests: 1 }],
      [
        { tokenId: 1, day: '2026-01-05', requests: 1 },
        { tokenId: 1, day: '2026-01-06', requests: 2 },
      ],
    ]);
    expect(written.map((w) => Object.fromEntries(w.ips))).toEqual([{ 1: '10.0.0.1', 2: '10.0.0.2' }, { 1: '10.0.0.3' }, { 1: '10.0.0.1' }]);
  });

  it('counts a day again after the clock went back', async () => {
    usage.record(1, undefined);
    clock.advance(120_000);
    usage.record(1, undefined);
    clock.set(Date.UTC(2026, 0, 5, 12, 0, 0));
    usage.record(1, undefined);
    await usage.flush();
    expect(written[0]!.counts).toEqual([
      { tokenId: 1, day: '2026-01-05', requests: 2 },
      { tokenId: 1, day: '2026-01-06', requests: 1 },
    ]);
  });
});
