import { createHash } from 'node:crypto';
import type { Redis } from '../../platform/redis.js';
import { allowanceOf, FORGET_AFTER_MS, type PasswordThrottleOptions } from './password-throttle.js';

/**
 * Records failures of every key in one step: KEYS are the keys, ARGV = now (ms), the longest wait
 * (ms), the forget time (ms), then the allowance of each key. A hash per key: f = failures, l = the
 * last failure, b = blocked until (ms). Same rules as the in-memory PasswordThrottle.
 */
const FAILED = `
local now = tonumber(ARGV[1])
local maxDelay = tonumber(ARGV[2])
local forget = tonumber(ARGV[3])
for i, key in ipairs(KEYS) do
  local f = tonumber(redis.call('HGET', key, 'f') or '0')
  local last = tonumber(redis.call('HGET', key, 'l') or '0')
  if f > 0 and now - last > forget then
    redis.call('DEL', key)
    f = 0
  end
  f = f + 1
  redis.call('HSET', key, 'f', f, 'l', now)
  local over = f - tonumber(ARGV[3 + i])
  if over >= 0 then
    redis.call('HSET', key, 'b', now + math.min(2 ^ math.min(over, 30) * 1000, maxDelay))
  end
  redis.call('PEXPIRE', key, forget + maxDelay)
end
return 1
`;

/** The latest "blocked until" of the keys (0 when none is blocked). */
const BLOCKED_UNTIL = `
local latest = 0
for _, key in ipairs(KEYS) do
  local b = tonumber(redis.call('HGET', key, 'b') or '0')
  if b > latest then latest = b end
end
return latest
`;

/**
 * The password back-off counted in Redis, so every instance sees every guess. Keys are stored as
 * hashes of the account, link token or IP (a link token never sits in Redis as itself). The times
 * are the app clock's, passed in; Redis expires a key a day after its last failure. Every call can
 * throw when Redis is away: the caller falls back (password-throttle-service.ts).
 */
export class RedisPasswordThrottle {
  constructor(
    private readonly redis: Redis,
    private readonly options: PasswordThrottleOptions,
    private readonly prefix = 'basegate:pw',
  ) {}

  /** Seconds to wait before the next attempt of any of `keys`, or 0 when allowed now. */
  async retryAfter(keys: readonly string[], now: number): Promise<number> {
    const until = Number(await this.redis.eval(BLOCKED_UNTIL, keys.length, ...keys.map((k) => this.storageKey(k))));
    return until > now ? Math.ceil((until - now) / 1000) : 0;
  }

  async failed(keys: readonly string[], now: number): Promise<void> {
    const allowances = keys.map((k) => allowanceOf(k, this.options));
    await this.redis.eval(
      FAILED,
      keys.length,
      ...keys.map((k) => this.storageKey(k)),
      now,
      this.options.maxDelaySeconds * 1000,
      FORGET_AFTER_MS,
      ...allowances,
    );
  }

  async succeeded(keys: readonly string[]): Promise<void> {
    if (keys.length > 0) await this.redis.del(...keys.map((k) => this.storageKey(k)));
  }

  storageKey(key: string): string {
    return `${this.prefix}:${createHash('sha256').update(key).digest('base64url').slice(0, 32)}`;
  }
}
