import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import * as repo from './tokens.repository.js';

export const LAST_ACCESS_WRITE_INTERVAL_MS = 60_000;

/**
 * Write-behind for API-Tokens' `last_access`: the first use in a minute is written at once, later
 * uses in that minute only in memory (shown by lists on this instance, and written on the next
 * use after the minute, by `flush()` or at shutdown). So a busy token costs one UPDATE a minute
 * per instance, not one per Base-Token.
 */
export class LastAccessRecorder {
  private readonly written = new Map<number, number>();
  private readonly pending = new Map<number, number>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly intervalMs = LAST_ACCESS_WRITE_INTERVAL_MS,
  ) {}

  async record(tokenId: number): Promise<void> {
    const now = this.clock.now();
    const last = this.written.get(tokenId);
    if (last !== undefined && now - last < this.intervalMs) {
      this.pending.set(tokenId, now);
      return;
    }
    this.prune(now);
    this.written.set(tokenId, now);
    this.pending.delete(tokenId);
    await repo.touchApiToken(this.db, tokenId, now);
  }

  /** The newest use known here: the stored value or a pending one. */
  latest(tokenId: number, stored: number | null): number | null {
    const pending = this.pending.get(tokenId);
    if (pending === undefined) return stored;
    return stored === null ? pending : Math.max(stored, pending);
  }

  forget(tokenId: number): void {
    this.written.delete(tokenId);
    this.pending.delete(tokenId);
  }

  async flush(): Promise<void> {
    const batch = [...this.pending];
    this.pending.clear();
    for (const [tokenId, at] of batch) {
      this.written.set(tokenId, at);
      await repo.touchApiToken(this.db, tokenId, at);
    }
  }

  /** Keeps the map from growing with every token ever used. */
  private prune(now: number): void {
    if (this.written.size < 10_000) return;
    for (const [tokenId, at] of this.written) {
      if (now - at >= this.intervalMs && !this.pending.has(tokenId)) this.written.delete(tokenId);
    }
  }
}
