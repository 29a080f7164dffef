export { createLimits, limitsFromConfig } from './limits.js';
export type { Limits, LimitsDeps } from './limits.js';
export { RateLimitService, STORE_WARNING_INTERVAL_MS } from './rate-limiter.js';
export type { CheckResult } from './rate-limiter.js';
export { RateLimitOverrides, OVERRIDES_TTL_MS } from './overrides.service.js';
export { BaseKeyCache, BASE_KEY_TTL_MS, MISSING_BASE_TTL_MS } from './base-key-cache.js';
export * from './limit-policy.js';
export { limitsRoutes, MAX_PER_MINUTE } from './limits.routes.js';
