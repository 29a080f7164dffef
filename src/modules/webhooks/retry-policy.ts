import type { OutboundResult } from '../../platform/http/index.js';

/**
 * What happens after one delivery attempt. Pure, so every branch is unit-tested.
 * - 2xx → success; 410 Gone → failed and the webhook is disabled at once;
 * - timeouts, DNS/connection/TLS errors, 408, 429 and 5xx → retried after the next delay of the
 *   schedule (±10 % jitter), never earlier than a `Retry-After` asks, until the schedule runs out;
 * - redirects, other 4xx, refused (SSRF guard) and invalid URLs → failed, not retried.
 */
export type Decision =
  | { outcome: 'success' }
  | { outcome: 'retry'; nextAttemptAt: number; error: string }
  | { outcome: 'failed'; error: string; exhausted: boolean }
  | { outcome: 'gone'; error: string };

export interface DecideInput {
  result: OutboundResult;
  /** 1 for the first try. */
  attempt: number;
  /** Delays (ms) before retry 1, 2, …; its length is the number of retries. */
  schedule: readonly number[];
  now: number;
  /** Uniform in [0, 1): the jitter source (injected so tests are exact). */
  random: () => number;
}

export const JITTER = 0.1;
/** A Retry-After further out than this is capped (a receiver cannot park a delivery for weeks). */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

export function decideAfterAttempt({ result, attempt, schedule, now, random }: DecideInput): Decision {
  let error: string;
  let retryAfterMs: number | null = null;
  if (result.ok) {
    const status = result.status;
    if (status >= 200 && status < 300) return { outcome: 'success' };
    if (status === 410) return { outcome: 'gone', error: 'HTTP 410 Gone: the receiver asked to stop' };
    if (status >= 300 && status < 400) {
      const location = result.headers.location ? ` to ${result.headers.location.slice(0, 300)}` : '';
      return { outcome: 'failed', error: `HTTP ${status}: redirect${location} not followed`, exhausted: false };
    }
    if (!(status === 408 || status === 429 || status >= 500)) {
      return { outcome: 'failed', error: `HTTP ${status}: not retried`, exhausted: false };
    }
    error = `HTTP ${status}`;
    retryAfterMs = parseRetryAfter(result.headers['retry-after'], now);
  } else {
    if (result.kind === 'blocked' || result.kind === 'invalid_url') {
      return { outcome: 'failed', error: result.message, exhausted: false };
    }
    error = result.message;
  }
  const delay = schedule[attempt - 1];
  if (delay === undefined) {
    return { outcome: 'failed', error: `${error}; gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}`, exhausted: true };
  }
  const jittered = Math.round(delay * (1 - JITTER + 2 * JITTER * random()));
  const wait = Math.max(jittered, retryAfterMs === null ? 0 : Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
  return { outcome: 'retry', nextAttemptAt: now + wait, error };
}

/** `Retry-After` as delay-seconds or an HTTP-date, in ms from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return null;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
