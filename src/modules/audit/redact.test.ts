import { describe, expect, it } from 'vitest';
import { canonicalJson } from './chain.js';
import { REDACTED, redact, redactedJson } from './redact.js';

describe('redact', () => {
  it('replaces secrets by key name at any depth and credential-shaped strings under any key', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    const out = redact({
      password: 'p',
      new_password: 'p2',
      app_name: 'ok',
      webhook: { secret: 's', url: 'https://example.com' },
      list: [{ api_token: 't' }, { note: 'a'.repeat(40).replace(/a/g, 'f') }],
      access_token: jwt,
      innocent: jwt,
      Authorization: 'Token x',
      otp_code: '123456',
    });
    expect(out).toEqual({
      password: REDACTED,
      new_password: REDACTED,
      app_name: 'ok',
      webhook: { secret: REDACTED, url: 'https://example.com' },
      list: [{ api_token: REDACTED }, { note: REDACTED }],
      access_token: REDACTED,
      innocent: REDACTED,
      Authorization: REDACTED,
      otp_code: REDACTED,
    });
  });

  it('bounds depth and string length', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 20; i++) deep = { d: deep };
    expect(JSON.stringify(redact(deep))).toContain('[too deep]');
    expect((redact('y'.repeat(5000)) as string).length).toBeLessThan(2100);
  });
});

describe('canonicalJson', () => {
  it('sorts keys at every depth and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: undefined, x: null }], c: 'q' } })).toBe('{"a":{"c":"q","d":[2,{"x":null,"z":1}]},"b":1}');
  });
});

describe('redactedJson', () => {
  it('is canonicalJson of the redacted value, in one pass', () => {
    const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    let deep: unknown = 'x';
    for (let i = 0; i < 20; i++) deep = { d: deep, [`k${i}`]: [i, null, undefined] };
    const values: unknown[] = [
      { table_name: 'T', rows: [{ Name: 'a', Zeta: 1, alpha: true }] },
      { password: undefined, token: 'x', z: undefined, b: { secret: { nested: 1 } }, a: [jwt, 'f'.repeat(40), 'ok', 'y'.repeat(5000)] },
      { 'ünï': 1, Ä: 2, a: 3, B: 4, '10': 5, '9': 6 },
      Array.from({ length: 150 }, (_, i) => ({ i })),
      deep,
      'plain',
      jwt,
      42,
      null,
      [],
      {},
    ];
    for (const value of values) expect(redactedJson(value)).toBe(canonicalJson(redact(value)));
  });
});
