import { Counter } from 'prom-client';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from '../../platform/redis.js';
import type { Metrics } from '../../platform/metrics.js';
import type { Clock } from '../../shared/clock.js';
import { LIMIT_CLASSES, WINDOW_SECONDS, decide, storageKey, type ClassLimits, type LimitClass, type RateDecision, type RateKey } from './limit-policy.js';
import type { RateLimitOverrides } from './overrides.service.js';
import { LocalWindows } from './local-windows.js';

/** Store errors are logged at most this often (each one still counts in /metrics). */
export const STORE_WARNING_INTERVAL_MS = 30_000;

/**
 * The counters never refuse by themselves: the limit of a key can change at runtime (per-base
 * overrides), so the store only counts and the decision compares against the current limit.
 */
const NEVER_REFUSE = Number.MAX_SAFE_INTEGER;

export type CheckResult =
  | { kind: 'unlimited' }
  | { kind: 'counted'; decision: RateDecision }
  /**
   * The shared store (Redis) failed: the request was counted in this instance's memory instead.
   * `warn` is true when this one should be logged.
   */
  | { kind: 'counted-locally'; decision: RateDecision; error: unknown; warn: boolean; suppressed: number };

export interface RateLimitServiceOptions {
  limits: ClassLimits;
  overrides: RateLimitOverrides;
  clock: Clock;
  metrics: Metrics;
  /** Shared counters in Redis; null = in this process's memory. */
  redis: Redis | null;
  keyPrefix?: string;
}

/** The counter after one more request (rate-limiter-flexible rejects with it when over its points). */
async function consumed(limiter: RateLimiterAbstract, key: string): Promise<RateLimiterRes> {
  try {
    return await limiter.consume(key);
  } catch (error) {
    if (error instanceof RateLimiterRes) return error;
    throw error;
  }
}

/**
 * Fixed 60-second windows per class and key, counted by rate-limiter-flexible in memory or in
 * Redis (so every instance shares one budget). While Redis fails, each instance counts in its own
 * memory (the limit holds per instance), with a metric and a throttled warning.
 */
export class RateLimitService {
  readonly store: 'memory' | 'redis';
  private readonly limiters: Record<LimitClass, RateLimiterAbstract>;
  /** With Redis: this instance's own counters, used while Redis fails (each instance then allows the full budget). */
  private readonly local: Record<LimitClass, RateLimiterAbstract> | null;
  private readonly storeErrors: Counter;
  private readonly rejected: Counter<'class'>;
  /** Without Redis: the classes' counters (by `<class>:<key>`), counted without a promise (`checkNow`). */
  private readonly windows: LocalWindows | null;
  /** Without Redis: the budgets' counters by API-Token id, counted without a promise (`checkBudgetNow`). */
  private readonly budgets: LocalWindows<number> | null;
  private lastWarning = -Infinity;
  private suppressedWarnings = 0;

  constructor(private readonly options: RateLimitServiceOptions) {
    const prefix = options.keyPrefix ?? 'basegate:rl';
    this.store = options.redis ? 'redis' : 'memory';
    const make = (cls: LimitClass): RateLimiterAbstract => {
      const common = { points: NEVER_REFUSE, duration: WINDOW_SECONDS, keyPrefix: `${prefix}:${cls}` };
      return options.redis
        ? new RateLimiterRedis({ ...common, storeClient: options.redis, rejectIfRedisNotReady: true })
        : new RateLimiterMemory(common);
    };
    this.limiters = Object.fromEntries(LIMIT_CLASSES.map((cls) => [cls, make(cls)])) as Record<LimitClass, RateLimiterAbstract>;
    const memory = (cls: LimitClass): RateLimiterAbstract => new RateLimiterMemory({ points: NEVER_REFUSE, duration: WINDOW_SECONDS, keyPrefix: `${prefix}:${cls}` });
    this.local = options.redis ? (Object.fromEntries(LIMIT_CLASSES.map((cls) => [cls, memory(cls)])) as Record<LimitClass, RateLimiterAbstract>) : null;
    this.windows = options.redis ? null : new LocalWindows(WINDOW_SECONDS * 1000);
    this.budgets = options.redis ? null : new LocalWindows<number>(WINDOW_SECONDS * 1000);
    this.storeErrors = new Counter({
      name: 'basegate_rate_limit_store_errors_total',
      help: 'Requests counted in this instance memory because the shared rate-limit store (Redis) failed',
      registers: [options.metrics.registry],
    });
    this.rejected = new Counter({
      name: 'basegate_rate_limited_requests_total',
      help: 'Requests refused with 429, by limit class',
      labelNames: ['class'],
      registers: [options.metrics.registry],
    });
  }

  /** The configured limits per class (0 = unlimited), before per-base overrides. */
  get defaults(): Readonly<ClassLimits> {
    return this.options.limits;
  }

  /** The limit that applies to `key` in `cls`: a base's override applies to base operations only. */
  limitFor(cls: LimitClass, key: RateKey): number | Promise<number> {
    const fallback = this.options.limits[cls];
    if (cls !== 'base' || key.kind !== 'base') return fallback;
    const override = this.options.overrides.limitFor(key.uuid);
    if (override instanceof Promise) return override.then((value) => value ?? fallback);
    return override ?? fallback;
  }

  /** Count one request of `key` in `cls` and say whether it may proceed. */
  async check(cls: LimitClass, key: RateKey): Promise<CheckResult> {
    const limit = await this.limitFor(cls, key);
    if (limit === 0) return { kind: 'unlimited' };
    const counted = this.checkNow(cls, key, limit);
    if (counted) return counted;
    try {
      return { kind: 'counted', decision: this.decide(cls, limit, await consumed(this.limiters[cls], storageKey(key))) };
    } catch (error) {
      // Redis failed (the memory store never throws): count here instead, so a limit still holds per instance.
      const decision = this.decide(cls, limit, await consumed(this.local![cls], storageKey(key)));
      return { kind: 'counted-locally', decision, error, ...this.storeFailed() };
    }
  }

  /**
   * `check` without a promise, for a limit already known (`limitFor` answered a number, not 0), when
   * the counters are in this process's memory (no Redis): a gateway call then counts in the rate
   * limiter's callback hook. Undefined with Redis (the count is shared: ask `check`).
   */
  checkNow(cls: LimitClass, key: RateKey, limit: number): { kind: 'counted'; decision: RateDecision } | undefined {
    if (!this.windows) return undefined;
    const now = this.options.clock.now();
    const { count, msLeft } = this.windows.hit(`${cls}:${storageKey(key)}`, now);
    return { kind: 'counted', decision: this.decided(cls, decide(limit, count, msLeft, now)) };
  }

  /**
   * Counts one request against a budget of its own (a scoped API-Token's `rate_limit`, by the token's
   * id), kept beside the base operations' counters; same windows, store and fallback as `check`.
   */
  async checkBudget(tokenId: number, limit: number): Promise<Exclude<CheckResult, { kind: 'unlimited' }>> {
    const counted = this.checkBudgetNow(tokenId, limit);
    if (counted) return counted;
    const storeKey = `budget:api-token:${tokenId}`;
    try {
      return { kind: 'counted', decision: this.decide('base', limit, await consumed(this.limiters.base, storeKey)) };
    } catch (error) {
      const decision = this.decide('base', limit, await consumed(this.local!.base, storeKey));
      return { kind: 'counted-locally', decision, error, ...this.storeFailed() };
    }
  }

  /**
   * `checkBudget` without a promise when the counters are in this process's memory (no Redis): a
   * scoped token's gateway call then counts its budget in the rate limiter's callback hook. Undefined
   * with Redis (the count is shared: ask `checkBudget`).
   */
  checkBudgetNow(tokenId: number, limit: number): { kind: 'counted'; decision: RateDecision } | undefined {
    if (!this.budgets) return undefined;
    const now = this.options.clock.now();
    const { count, msLeft } = this.budgets.hit(tokenId, now);
    return { kind: 'counted', decision: this.decided('base', decide(limit, count, msLeft, now)) };
  }

  private decide(cls: LimitClass, limit: number, res: RateLimiterRes): RateDecision {
    return this.decided(cls, decide(limit, res.consumedPoints, res.msBeforeNext, this.options.clock.now()));
  }

  private decided(cls: LimitClass, decision: RateDecision): RateDecision {
    if (!decision.allowed) this.rejected.inc({ class: cls });
    return decision;
  }

  /** Counts a store failure; says whether to log it (at most once per interval, with the repeats not logged). */
  private storeFailed(): { warn: boolean; suppressed: number } {
    this.storeErrors.inc();
    const now = this.options.clock.now();
    if (now - this.lastWarning < STORE_WARNING_INTERVAL_MS) {
      this.suppressedWarnings += 1;
      return { warn: false, suppressed: 0 };
    }
    const suppressed = this.suppressedWarnings;
    this.lastWarning = now;
    this.suppressedWarnings = 0;
    return { warn: true, suppressed };
  }
}
