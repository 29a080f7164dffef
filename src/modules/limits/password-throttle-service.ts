import { Counter } from 'prom-client';
import type { Redis } from '../../platform/redis.js';
import type { Metrics } from '../../platform/metrics.js';
import type { Clock } from '../../shared/clock.js';
import { PasswordThrottle, type PasswordThrottleOptions } from './password-throttle.js';
import { RedisPasswordThrottle } from './password-throttle-redis.js';
import { STORE_WARNING_INTERVAL_MS } from './rate-limiter.js';

export interface ThrottleLog {
  warn(obj: object, msg: string): void;
}

const STORE_ERRORS = 'basegate_password_throttle_store_errors_total';

/**
 * The password back-off of this instance: in Redis when REDIS_URL is set (guesses on one instance
 * count on all), else in memory. This instance's own failures are always counted in memory too, so
 * when Redis fails the in-memory back-off answers instead (never open): each failure counts in
 * /metrics and a warning is logged at most every 30 s, like the rate limiter's.
 */
export class PasswordThrottleService {
  readonly store: 'memory' | 'redis';
  private readonly local: PasswordThrottle;
  private readonly shared: RedisPasswordThrottle | null;
  private readonly storeErrors: Counter;
  private lastWarning = -Infinity;
  private suppressed = 0;

  constructor(
    private readonly clock: Clock,
    options: PasswordThrottleOptions,
    metrics: Metrics,
    redis: Redis | null,
  ) {
    this.local = new PasswordThrottle(clock, options);
    this.shared = redis ? new RedisPasswordThrottle(redis, options) : null;
    this.store = redis ? 'redis' : 'memory';
    // One counter per registry, also when an app is built twice on one container (tests).
    this.storeErrors =
      (metrics.registry.getSingleMetric(STORE_ERRORS) as Counter | undefined) ??
      new Counter({
        name: STORE_ERRORS,
        help: 'Password-throttle calls answered from this instance memory because the shared store (Redis) failed',
        registers: [metrics.registry],
      });
  }

  /** Seconds to wait before the next attempt of any of `keys`, or 0 when allowed now. */
  async retryAfter(keys: readonly string[], log: ThrottleLog): Promise<number> {
    if (this.shared) {
      try {
        return await this.shared.retryAfter(keys, this.clock.now());
      } catch (error) {
        this.storeFailed(error, log);
      }
    }
    return this.local.retryAfter(keys);
  }

  async failed(keys: readonly string[], log: ThrottleLog): Promise<void> {
    this.local.failed(keys);
    if (!this.shared) return;
    try {
      await this.shared.failed(keys, this.clock.now());
    } catch (error) {
      this.storeFailed(error, log);
    }
  }

  async succeeded(keys: readonly string[], log: ThrottleLog): Promise<void> {
    this.local.succeeded(keys);
    if (!this.shared) return;
    try {
      await this.shared.succeeded(keys);
    } catch (error) {
      this.storeFailed(error, log);
    }
  }

  private storeFailed(error: unknown, log: ThrottleLog): void {
    this.storeErrors.inc();
    const now = this.clock.now();
    if (now - this.lastWarning < STORE_WARNING_INTERVAL_MS) {
      this.suppressed += 1;
      return;
    }
    log.warn({ err: error, suppressed: this.suppressed }, 'password-throttle store unreachable: counting wrong passwords in this instance only');
    this.lastWarning = now;
    this.suppressed = 0;
  }
}
