import { sql } from 'kysely';
import type { Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';

/** Bases per statement when refreshing many at once (well under both engines' parameter limits). */
const CHUNK = 500;

/** Of `baseIds`, those some instance has live sockets on (or had, within the reconnection window). One primary-key lookup. */
export async function presentBases(db: Executor, baseIds: number[], now: number): Promise<number[]> {
  if (baseIds.length === 0) return [];
  const rows = await db
    .selectFrom('realtime_presence')
    .select('base_id')
    .where('base_id', 'in', [...new Set(baseIds)])
    .where('expires_at', '>', now)
    .execute();
  return rows.map((row) => Number(row.base_id));
}

/** Marks the bases present until `until` at least (never shortens what another instance recorded). */
export async function markPresent(db: Executor, baseIds: number[], until: number): Promise<void> {
  for (let i = 0; i < baseIds.length; i += CHUNK) {
    const values = baseIds.slice(i, i + CHUNK).map((baseId) => ({ base_id: baseId, expires_at: until }));
    await db
      .insertInto('realtime_presence')
      .values(values)
      .onConflict((oc) =>
        oc.column('base_id').doUpdateSet({
          expires_at: sql<number>`case when realtime_presence.expires_at > excluded.expires_at then realtime_presence.expires_at else excluded.expires_at end`,
        }),
      )
      .execute();
  }
}

/** Forgets bases whose presence ran out (any instance may; a base joined again is inserted anew). */
export async function pruneAbsent(db: Executor, now: number): Promise<void> {
  await db.deleteFrom('realtime_presence').where('expires_at', '<=', now).execute();
}

type Log = { warn(obj: object, msg: string): void };

/**
 * This instance's share of `realtime_presence`: the bases its sockets joined, counted here, written
 * to the shared table when one is joined, on every sweep (`refresh`, each instance keeps its own bases
 * alive for `ttlMs`), and when the last socket of a base leaves: then for the reconnection window, so
 * the changes a client misses while reconnecting are still sent for it to recover.
 */
export class Presence {
  private readonly sockets = new Map<number, number>();
  private readonly writes = new Set<Promise<void>>();
  private prunedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly recoveryMs: number,
    private readonly log: () => Log | undefined,
  ) {}

  /**
   * A socket joined the base (or came back to it by recovery): counted at once, and written before it
   * enters the room so that no change meant for it is skipped. A failed write is not counted.
   */
  async joined(baseId: number): Promise<void> {
    this.sockets.set(baseId, (this.sockets.get(baseId) ?? 0) + 1);
    try {
      await this.track(markPresent(this.db, [baseId], this.clock.now() + this.ttlMs));
    } catch (error) {
      this.left(baseId, false);
      throw error;
    }
  }

  /** True while sockets on this instance are joined to the base. */
  hasSockets(baseId: number): boolean {
    return this.sockets.has(baseId);
  }

  /** A socket counted by `joined` left the base (disconnected, or joined another one). */
  left(baseId: number, keepForRecovery = true): void {
    const count = this.sockets.get(baseId);
    if (count === undefined) return;
    if (count > 1) {
      this.sockets.set(baseId, count - 1);
      return;
    }
    this.sockets.delete(baseId);
    if (!keepForRecovery) return;
    // A client reconnecting within the window recovers what it missed: keep its changes coming.
    void this.track(markPresent(this.db, [baseId], this.clock.now() + this.recoveryMs)).catch((error: unknown) =>
      this.log()?.warn({ err: error, baseId }, 'recording realtime presence failed'),
    );
  }

  /** Keeps this instance's bases present for another `ttlMs`, and forgets expired ones. */
  async refresh(): Promise<void> {
    const now = this.clock.now();
    await this.track(markPresent(this.db, [...this.sockets.keys()], now + this.ttlMs));
    if (now - this.prunedAt < this.ttlMs) return;
    this.prunedAt = now;
    await this.track(pruneAbsent(this.db, now));
  }

  /** Waits for the writes under way (before the database closes). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.writes]);
  }

  private track(write: Promise<void>): Promise<void> {
    this.writes.add(write);
    return write.finally(() => this.writes.delete(write));
  }
}
