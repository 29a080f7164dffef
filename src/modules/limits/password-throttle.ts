import type { Clock } from '../../shared/clock.js';

export interface PasswordThrottleOptions {
  /** Failures of one key before the back-off starts. */
  failuresBeforeDelay: number;
  /** The delay doubles from 1 s per further failure, up to this. */
  maxDelaySeconds: number;
}

interface Entry {
  failures: number;
  blockedUntil: number;
  lastFailure: number;
}

/** Keys remembered at most (oldest forgotten first), so an attacker cycling keys cannot grow memory without bound. */
const MAX_KEYS = 100_000;
export const IP_ALLOWANCE_FACTOR = 4;
/** A key with no failure for this long starts over. */
export const FORGET_AFTER_MS = 24 * 3_600_000;

/** Failures of `key` allowed before the back-off: an IP serves many accounts (offices, NAT), so it gets four times the allowance. */
export function allowanceOf(key: string, options: PasswordThrottleOptions): number {
  return key.includes('ip:') ? options.failuresBeforeDelay * IP_ALLOWANCE_FACTOR : options.failuresBeforeDelay;
}

/** The wait after the `over`-th failure beyond the allowance (0-based): 1 s, 2 s, 4 s, … up to the longest wait. */
export function delayMs(over: number, options: PasswordThrottleOptions): number {
  return Math.min(2 ** Math.min(over, 30), options.maxDelaySeconds) * 1000;
}

/**
 * Growing back-off on password guesses (login, external-link passwords), per key — the client IP
 * and the account or link. After `failuresBeforeDelay` failures each further one blocks the key for
 * 1 s, 2 s, 4 s, … up to `maxDelaySeconds`; a success clears the account's or link's key. Counts
 * live in this process; with Redis, password-throttle-redis.ts shares them (see docs/security.md).
 */
export class PasswordThrottle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly options: PasswordThrottleOptions,
  ) {}

  /** Seconds to wait before the next attempt of any of `keys`, or 0 when allowed now. */
  retryAfter(keys: readonly string[]): number {
    const now = this.clock.now();
    let wait = 0;
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry && entry.blockedUntil > now) wait = Math.max(wait, Math.ceil((entry.blockedUntil - now) / 1000));
    }
    return wait;
  }

  failed(keys: readonly string[]): void {
    const now = this.clock.now();
    for (const key of keys) {
      let entry = this.entries.get(key);
      if (!entry || now - entry.lastFailure > FORGET_AFTER_MS) entry = { failures: 0, blockedUntil: 0, lastFailure: now };
      entry.failures++;
      entry.lastFailure = now;
      const over = entry.failures - allowanceOf(key, this.options);
      if (over >= 0) entry.blockedUntil = now + delayMs(over, this.options);
      // Re-insert: the map's order is the forgetting order.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    while (this.entries.size > MAX_KEYS) this.entries.delete(this.entries.keys().next().value!);
  }

  succeeded(keys: readonly string[]): void {
    for (const key of keys) this.entries.delete(key);
  }
}
