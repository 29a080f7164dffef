import type { Clock } from '../../shared/clock.js';

/**
 * Values made in the current second, by key. A Base-Token's claims are fixed by its grant and the
 * second it is signed in (`iat`, `exp` are whole seconds), so a second request for the same grant
 * within that second would be signed into the very same JWT. Handing out the one already made skips
 * the JSON encoding and the HMAC, and changes nothing a client can see. Everything is forgotten when
 * the second turns.
 */
export class SameSecond<V> {
  private second = -1;
  private readonly entries = new Map<string, V>();

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: string, make: () => V): V {
    const second = Math.floor(this.clock.now() / 1000);
    if (second !== this.second) {
      this.entries.clear();
      this.second = second;
    }
    let value = this.entries.get(key);
    if (value === undefined) {
      value = make();
      if (this.entries.size < this.maxEntries) this.entries.set(key, value);
    }
    return value;
  }
}
