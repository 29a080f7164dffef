import type { Clock } from '../../shared/clock.js';

/**
 * How long the tokens module serves a credential version, an API-Token or a base from memory
 * without asking the database. Changes made on this instance evict at once, and on the others
 * through Redis; without Redis, other instances notice within this time.
 */
export const CACHE_TTL_MS = 10_000;

/**
 * A small read-through cache with a time-to-live, a size bound and eviction that is safe against
 * in-flight loads: a value loaded before an `evict`/`clear` is not stored afterwards, so a
 * revocation can never be undone by a slow read that started before it.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();
  /** Moves on every eviction; a load stores its result only if no eviction happened meanwhile. */
  private epoch = 0;

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /** The cached value, or `load()`'s result (stored unless it is `undefined` or `keep` says no). */
  async get(key: K, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.until > this.clock.now()) return hit.value;
    const epoch = this.epoch;
    const value = await load();
    if (epoch === this.epoch && value !== undefined && keep(value)) this.set(key, value);
    return value;
  }

  /** The cached value if present and fresh; never loads. */
  peek(key: K): V | undefined {
    const hit = this.entries.get(key);
    return hit && hit.until > this.clock.now() ? hit.value : undefined;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      // Oldest insertion first: Map iterates in insertion order.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, until: this.clock.now() + this.ttlMs });
  }

  evict(key: K): void {
    this.epoch += 1;
    this.entries.delete(key);
  }

  clear(): void {
    this.epoch += 1;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
