/** A system admin's per-base limit for base operations, replacing RATE_LIMIT_BASE_PER_MINUTE. */
export interface RateLimitOverridesTable {
  base_id: number;
  /** Requests per minute; 0 = unlimited. */
  per_minute: number;
  updated_by: number | null;
  updated_at: number;
}
