import { badRequest } from '../../shared/errors.js';

/** Bounds of `max_rate` (deliveries per second): one per 100 s up to 1,000 per second. */
export const MIN_RATE = 0.01;
export const MAX_RATE = 1000;

/**
 * A webhook's pacing as a token bucket (GCRA form): one token every 1/max_rate s, room for one
 * second's worth (at least 1), so a paced webhook may send a short burst and then its rate.
 * `readyAt` is when the next token is available (null: full bucket). Pure: the claim applies it.
 */
export interface Pace {
  maxRate: number;
  readyAt: number | null;
}

function shape(maxRate: number): { interval: number; slack: number } {
  const interval = 1000 / maxRate;
  return { interval, slack: (Math.max(1, Math.floor(maxRate)) - 1) * interval };
}

/** How many deliveries the bucket allows at `now` (at most `cap`). */
export function allowance(pace: Pace, now: number, cap: number): number {
  if (pace.readyAt === null || pace.readyAt <= now) {
    const { interval, slack } = shape(pace.maxRate);
    // The theoretical arrival time, never in the past: an idle bucket holds at most its size.
    const tat = pace.readyAt === null ? now : Math.max(now, pace.readyAt + slack);
    return Math.max(0, Math.min(cap, Math.floor((slack - (tat - now)) / interval + 1e-9) + 1));
  }
  return 0;
}

/** The bucket's `readyAt` after `sent` deliveries at `now` (integer ms, rounded up: never faster than the rate). */
export function advance(pace: Pace, now: number, sent: number): number {
  const { interval, slack } = shape(pace.maxRate);
  const tat = pace.readyAt === null ? now : Math.max(now, pace.readyAt + slack);
  return Math.ceil(tat + sent * interval - slack);
}

/** `max_rate` from a create/update body: undefined = not given, null = remove, else a bounded number. */
export function parseMaxRate(value: unknown): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  const rate = typeof value === 'number' ? value : typeof value === 'string' && value.length <= 20 ? Number(value) : NaN;
  if (!Number.isFinite(rate) || rate < MIN_RATE || rate > MAX_RATE) {
    throw badRequest(`max_rate must be a number of deliveries per second from ${MIN_RATE} to ${MAX_RATE}`);
  }
  return rate;
}
