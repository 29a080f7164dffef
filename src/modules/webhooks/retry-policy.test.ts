import { describe, expect, it } from 'vitest';
import type { OutboundResult } from '../../platform/http/index.js';
import { JITTER, MAX_RETRY_AFTER_MS, decideAfterAttempt, parseRetryAfter } from './retry-policy.js';

const NOW = Date.UTC(2026, 0, 5, 10, 0, 0);
const SCHEDULE = [5_000, 300_000, 1_800_000];

const http = (status: number, headers: Record<string, string> = {}): OutboundResult => ({
  ok: true,
  status,
  headers,
  body: '',
  truncated: false,
  durationMs: 3,
});
const failure = (kind: Exclude<OutboundResult, { ok: true }>['kind'], message = `${kind} failed`): OutboundResult => ({
  ok: false,
  kind,
  message,
  durationMs: 3,
});
const decide = (result: OutboundResult, attempt = 1, random = 0.5) =>
  decideAfterAttempt({ result, attempt, schedule: SCHEDULE, now: NOW, random: () => random });

describe('decideAfterAttempt', () => {
  it.each([200, 201, 202, 204, 299])('HTTP %i is a success', (status) => {
    expect(decide(http(status))).toEqual({ outcome: 'success' });
  });

  it('410 Gone ends the delivery and asks to disable the webhook', () => {
    expect(decide(http(410))).toEqual({ outcome: 'gone', error: 'HTTP 410 Gone: the receiver asked to stop' });
  });

  it.each([400, 401, 403, 404, 405, 409, 413, 422, 451, 499])('HTTP %i fails without a retry', (status) => {
    expect(decide(http(status))).toEqual({ outcome: 'failed', error: `HTTP ${status}: not retried`, exhausted: false });
  });

  it.each([100, 101])('an informational HTTP %i answer is not a success and is not retried', (status) => {
    expect(decide(http(status)).outcome).toBe('failed');
  });

  it('redirects are not followed and not retried', () => {
    expect(decide(http(301, { location: 'https://elsewhere.example/' }))).toEqual({
      outcome: 'failed',
      error: 'HTTP 301: redirect to https://elsewhere.example/ not followed',
      exhausted: false,
    });
    expect(decide(http(307))).toEqual({ outcome: 'failed', error: 'HTTP 307: redirect not followed', exhausted: false });
  });

  it.each([408, 429, 500, 502, 503, 504, 599])('HTTP %i is retried after the first delay', (status) => {
    expect(decide(http(status))).toEqual({ outcome: 'retry', nextAttemptAt: NOW + 5_000, error: `HTTP ${status}` });
  });

  it.each(['timeout', 'dns', 'connect', 'tls', 'network'] as const)('a %s error is retried', (kind) => {
    expect(decide(failure(kind))).toEqual({ outcome: 'retry', nextAttemptAt: NOW + 5_000, error: `${kind} failed` });
  });

  it.each(['blocked', 'invalid_url'] as const)('a %s target fails at once', (kind) => {
    expect(decide(failure(kind, 'refused'))).toEqual({ outcome: 'failed', error: 'refused', exhausted: false });
  });

  it('walks the schedule, then gives up with the last error', () => {
    expect(decide(http(500), 2)).toMatchObject({ nextAttemptAt: NOW + 300_000 });
    expect(decide(http(500), 3)).toMatchObject({ nextAttemptAt: NOW + 1_800_000 });
    expect(decide(http(500), 4)).toEqual({ outcome: 'failed', error: 'HTTP 500; gave up after 4 attempts', exhausted: true });
    expect(decide(failure('connect', 'connection failed: ECONNREFUSED'), 4)).toEqual({
      outcome: 'failed',
      error: 'connection failed: ECONNREFUSED; gave up after 4 attempts',
      exhausted: true,
    });
  });

  it('an empty schedule means a single attempt', () => {
    const decision = decideAfterAttempt({ result: http(503), attempt: 1, schedule: [], now: NOW, random: () => 0.5 });
    expect(decision).toEqual({ outcome: 'failed', error: 'HTTP 503; gave up after 1 attempt', exhausted: true });
  });

  it('jitters each delay by at most ±10 %', () => {
    expect(JITTER).toBe(0.1);
    expect(decide(http(500), 1, 0)).toMatchObject({ nextAttemptAt: NOW + 4_500 });
    expect(decide(http(500), 1, 0.999999)).toMatchObject({ nextAttemptAt: NOW + 5_500 });
    expect(decide(http(500), 2, 0.25)).toMatchObject({ nextAttemptAt: NOW + 285_000 });
  });

  it('waits for Retry-After when it asks for longer than the schedule, never less than the schedule', () => {
    expect(decide(http(429, { 'retry-after': '120' }))).toMatchObject({ outcome: 'retry', nextAttemptAt: NOW + 120_000 });
    expect(decide(http(503, { 'retry-after': '1' }))).toMatchObject({ nextAttemptAt: NOW + 5_000 });
    const date = new Date(NOW + 3_600_000).toUTCString();
    expect(decide(http(503, { 'retry-after': date }))).toMatchObject({ nextAttemptAt: NOW + 3_600_000 });
    expect(decide(http(503, { 'retry-after': String(30 * 86_400) }))).toMatchObject({ nextAttemptAt: NOW + MAX_RETRY_AFTER_MS });
    expect(decide(http(503, { 'retry-after': 'soon' }))).toMatchObject({ nextAttemptAt: NOW + 5_000 });
  });

  it('ignores Retry-After on answers that are not retried and after the last attempt', () => {
    expect(decide(http(400, { 'retry-after': '60' })).outcome).toBe('failed');
    expect(decide(http(429, { 'retry-after': '60' }), 4)).toMatchObject({ outcome: 'failed', exhausted: true });
  });
});

describe('parseRetryAfter', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['0', 0],
    ['120', 120_000],
    [' 7 ', 7_000],
    ['-5', null],
    ['1.5', null],
    ['12345678901', null],
    ['tomorrow-ish', null],
    [new Date(NOW + 90_000).toUTCString(), 90_000],
    [new Date(NOW - 90_000).toUTCString(), 0],
  ])('%j → %j', (value, expected) => {
    expect(parseRetryAfter(value, NOW)).toBe(expected);
  });
});
