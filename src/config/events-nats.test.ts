import { describe, expect, it } from 'vitest';
import { ConfigError } from './env.js';
import { loadEventsNatsConfig } from './events-nats.js';

describe('EVENTS_NATS_* configuration', () => {
  it('is off without EVENTS_NATS_URL and has defaults with it', () => {
    expect(loadEventsNatsConfig({})).toBeNull();
    expect(loadEventsNatsConfig({ EVENTS_NATS_URL: 'nats://127.0.0.1:4222' })).toEqual({
      url: 'nats://127.0.0.1:4222',
      stream: 'BASEGATE_EVENTS',
      subjectPrefix: 'basegate',
      timeoutMs: 5000,
    });
  });

  it.each([
    [{ EVENTS_NATS_URL: 'http://127.0.0.1:4222' }, 'EVENTS_NATS_URL'],
    [{ EVENTS_NATS_URL: 'nats://a:1, redis://b:2' }, 'EVENTS_NATS_URL'],
    [{ EVENTS_NATS_URL: 'nats://a:1', EVENTS_NATS_STREAM: 'has.dot' }, 'EVENTS_NATS_STREAM'],
    [{ EVENTS_NATS_URL: 'nats://a:1', EVENTS_NATS_SUBJECT_PREFIX: 'events.>' }, 'EVENTS_NATS_SUBJECT_PREFIX'],
    [{ EVENTS_NATS_URL: 'nats://a:1', EVENTS_NATS_SUBJECT_PREFIX: 'a..b' }, 'EVENTS_NATS_SUBJECT_PREFIX'],
    [{ EVENTS_NATS_URL: 'nats://a:1', EVENTS_NATS_TIMEOUT_MS: '10' }, 'EVENTS_NATS_TIMEOUT_MS'],
  ])('refuses %o naming the variable', (env, variable) => {
    let error: unknown;
    try {
      loadEventsNatsConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe(variable);
  });
});
