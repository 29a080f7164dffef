import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import * as repo from './tokens.repository.js';

export const USAGE_FLUSH_INTERVAL_MS = 60_000;
/** Days of counts a token list shows. */
export const USAGE_DAYS_SHOWN = 30;
const MAX_PENDING = 10_000;

export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * Request counts per API-Token and UTC day, and the last client address: counted in memory and
 * written in one batch a minute (or when the batch grows large, before a list, at shutdown), so a
 * busy token costs a few statements a minute per instance, not one per request.
 */
export class TokenUsage {
  private counts = new Map<string, { tokenId: number; day: string; requests: number }>();
  /** Today's entries of `counts` by token: a repeat use finds its count without building a key. */
  private today = new Map<number, { tokenId: number; day: string; requests: number }>();
  private ips = new Map<number, string>();
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** The current UTC day and when it ends (ms): a day string is built once a day, not per request. */
  private day = '';
  private dayEnds = 0;

  /** Counts one use; true when `ip` differs from the token's last address noted here (a client address new since the last write). */
  record(tokenId: number, ip: string | undefined): boolean {
    const now = this.clock.now();
    if (now >= this.dayEnds || now < this.dayEnds - 86_400_000) {
      this.day = utcDay(now);
      this.dayEnds = (Math.floor(now / 86_400_000) + 1) * 86_400_000;
      this.today = new Map();
    }
    const known = this.today.get(tokenId);
    if (known) known.requests += 1;
    else {
      const day = this.day;
      const key = `${tokenId}:${day}`;
      let entry = this.counts.get(key);
      if (entry) entry.requests += 1;
      else this.counts.set(key, (entry = { tokenId, day, requests: 1 }));
      this.today.set(tokenId, entry);
    }
    const moved = ip !== undefined && ip !== '' && this.ips.get(tokenId) !== ip;
    if (moved) this.ips.set(tokenId, ip);
    if (this.counts.size >= MAX_PENDING) void this.flush().catch(() => undefined);
    return moved;
  }

  /** The last client address seen here and not yet written. */
  pendingIp(tokenId: number): string | undefined {
    return this.ips.get(tokenId);
  }

  /** Writes what is counted; flushes never overlap, so counts are added once. */
  flush(): Promise<void> {
    const run = this.flushing.then(async () => {
      if (this.counts.size === 0 && this.ips.size === 0) return;
      const counts = [...this.counts.values()];
      const ips = this.ips;
      this.counts = new Map();
      this.today = new Map();
      this.ips = new Map();
      await repo.addUsage(this.db, counts, ips);
    });
    this.flushing = run.catch(() => undefined);
    return run;
  }

  /** Requests per day of these tokens over the last USAGE_DAYS_SHOWN days, newest first. */
  async perDay(tokenIds: number[]): Promise<Map<number, Array<{ day: string; requests: number }>>> {
    await this.flush();
    const since = utcDay(this.clock.now() - (USAGE_DAYS_SHOWN - 1) * 86_400_000);
    const result = new Map<number, Array<{ day: string; requests: number }>>();
    for (const row of await repo.usageOf(this.db, tokenIds, since)) {
      const list = result.get(row.token_id) ?? [];
      list.push({ day: row.day, requests: row.requests });
      result.set(row.token_id, list);
    }
    return result;
  }
}
