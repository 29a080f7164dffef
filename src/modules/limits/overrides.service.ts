import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { notFound } from '../../shared/errors.js';
import type { BaseAccess, BaseListing } from '../access/index.js';
import * as repo from './limits.repository.js';
import type { OverrideRow } from './limits.repository.js';

/** How long an instance serves its copy of the overrides before re-reading them (other instances' changes). */
export const OVERRIDES_TTL_MS = 5_000;

/**
 * Per-base limits set by a system admin at runtime. The limiter asks on every base request, so
 * the whole (small) table is held in memory and re-read at most every OVERRIDES_TTL_MS: a change
 * made on this instance applies to the next request, one made on another instance within the TTL.
 */
export class RateLimitOverrides {
  private cache: Map<string, number> | null = null;
  private loadedAt = -Infinity;
  private loading: Promise<Map<string, number>> | null = null;
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly ttlMs: number = OVERRIDES_TTL_MS,
  ) {}

  /** The override of a base (requests per minute, 0 = unlimited), or undefined when it has none. */
  limitFor(baseUuid: string): number | undefined | Promise<number | undefined> {
    if (this.cache && this.clock.now() - this.loadedAt < this.ttlMs) return this.cache.get(baseUuid);
    return this.reload().then((map) => map.get(baseUuid));
  }

  list(): Promise<OverrideRow[]> {
    return repo.listOverrides(this.db);
  }

  /** The base and its override (null when none); 404 for an unknown base. */
  async get(baseUuid: string): Promise<{ base: BaseListing; perMinute: number | null }> {
    const base = await this.base(baseUuid);
    return { base, perMinute: await repo.findOverride(this.db, base.id) };
  }

  async set(baseUuid: string, perMinute: number, adminId: number): Promise<BaseListing> {
    const base = await this.base(baseUuid);
    await repo.upsertOverride(this.db, { base_id: base.id, per_minute: perMinute, updated_by: adminId, updated_at: this.clock.now() });
    this.invalidate();
    return base;
  }

  /** Whether there was an override to remove; 404 for an unknown base. */
  async remove(baseUuid: string): Promise<boolean> {
    const base = await this.base(baseUuid);
    const removed = await repo.deleteOverride(this.db, base.id);
    this.invalidate();
    return removed;
  }

  /** Forget the cached copy (and any read in flight, which may predate a write) so the next request re-reads. */
  invalidate(): void {
    this.generation += 1;
    this.loadedAt = -Infinity;
    this.loading = null;
  }

  private async base(baseUuid: string): Promise<BaseListing> {
    const base = await this.access.findByUuid(baseUuid);
    if (!base) throw notFound('dtable not found.');
    return base;
  }

  /** One read at a time; when the database fails, the previous copy stays in use until the next TTL. */
  private reload(): Promise<Map<string, number>> {
    if (this.loading) return this.loading;
    const generation = this.generation;
    const started = this.clock.now();
    const loading: Promise<Map<string, number>> = repo
      .listOverrides(this.db)
      .then((rows) => new Map(rows.map((r) => [r.base_uuid, r.per_minute])))
      .catch(() => this.cache ?? new Map<string, number>())
      .then((map) => {
        if (generation === this.generation) {
          this.cache = map;
          this.loadedAt = started;
        }
        return map;
      })
      .finally(() => {
        if (this.loading === loading) this.loading = null;
      });
    this.loading = loading;
    return loading;
  }
}
