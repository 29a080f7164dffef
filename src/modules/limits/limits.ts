import type { Config } from '../../config/index.js';
import type { Db } from '../../db/index.js';
import type { Redis } from '../../platform/redis.js';
import type { Metrics } from '../../platform/metrics.js';
import type { Clock } from '../../shared/clock.js';
import type { BaseAccess } from '../access/index.js';
import { BaseKeyCache } from './base-key-cache.js';
import type { ClassLimits } from './limit-policy.js';
import { RateLimitOverrides } from './overrides.service.js';
import { RateLimitService } from './rate-limiter.js';

/** Everything the rate-limit hook and the admin routes need, built once per container. */
export interface Limits {
  service: RateLimitService;
  overrides: RateLimitOverrides;
  baseKeys: BaseKeyCache;
}

export interface LimitsDeps {
  config: Config;
  db: Db;
  clock: Clock;
  access: BaseAccess;
  metrics: Metrics;
  redis: Redis | null;
}

export function limitsFromConfig(config: Config): ClassLimits {
  return {
    account: config.rateLimitAccountPerMinute,
    base: config.rateLimitBasePerMinute,
    'auth-token': config.rateLimitAuthTokenPerMinute,
  };
}

export function createLimits({ config, db, clock, access, metrics, redis }: LimitsDeps): Limits {
  const overrides = new RateLimitOverrides(db, clock, access);
  return {
    overrides,
    baseKeys: new BaseKeyCache(access, clock),
    service: new RateLimitService({ limits: limitsFromConfig(config), overrides, clock, metrics, redis }),
  };
}
