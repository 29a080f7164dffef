import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import {
  baseUuidFromBaseToken,
  baseUuidFromParams,
  classify,
  decide,
  isGatewayPath,
  normalizePath,
  storageKey,
  usageHeaders,
  workspaceBaseFromParams,
} from './limit-policy.js';

const UUID = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
const HEX = UUID.replace(/-/g, '');

describe('normalizePath', () => {
  it.each([
    ['/api2/auth-token/', '/api2/auth-token'],
    ['/api2/auth-token', '/api2/auth-token'],
    ['/api2/auth-token///', '/api2/auth-token'],
    ['/ping/?x=1', '/ping'],
    ['/', '/'],
    ['/?q', '/'],
  ])('%s → %s', (input, expected) => expect(normalizePath(input)).toBe(expected));
});

describe('classify', () => {
  it.each([
    // auth-token, with and without trailing slash, route pattern or raw URL with a query
    ['/api2/auth-token/', 'auth-token'],
    ['/api2/auth-token', 'auth-token'],
    ['/api2/auth-token/?next=1', 'auth-token'],
    // account operations
    ['/api/v2.1/user/', 'account'],
    ['/api/v2.1/workspace/:workspace_id/dtable/:base_name/access-token/', 'account'],
    ['/api2/account/info/', 'account'],
    ['/api2/auth-token/extra/', 'account'],
    ['/api2/auth-tokens/', 'account'],
    // base operations
    ['/api-gateway/api/v2/dtables/:base_uuid/rows/', 'base'],
    ['/api-gateway/api/v2/dtables/abc', 'base'],
    ['/api-gateway/api/v2/', 'base'],
    ['/api-gateway/anything', 'base'],
    ['/api-gateway', 'base'],
    ['/api-gateway/api/v2/ping/extra', 'base'],
    // anything else is counted as an account operation rather than left unlimited
    ['/dtable-server/api/v1/dtables/x/rows/', 'account'],
    ['/api/docs/openapi.json', 'account'],
    ['/', 'account'],
    ['/api-gatewayx/', 'account'],
    ['/pingx', 'account'],
  ])('%s → %s', (path, expected) => expect(classify(path)).toBe(expected));

  it.each(['/ping/', '/ping', '/api2/ping/', '/api2/ping', '/api-gateway/api/v2/ping/', '/api-gateway/api/v2/ping', '/server-info/', '/server-info', '/metrics', '/metrics/', '/ping/?a=b'])(
    '%s is exempt',
    (path) => expect(classify(path)).toBeNull(),
  );
});

describe('isGatewayPath', () => {
  it.each([
    ['/api-gateway/api/v2/x', true],
    ['/api-gateway', true],
    ['/api-gateway?x', true],
    ['/api-gatewayx', false],
    ['/api/v2.1/x', false],
  ])('%s → %s', (path, expected) => expect(isGatewayPath(path)).toBe(expected));
});

describe('storageKey', () => {
  it('separates bases from IPs', () => {
    expect(storageKey({ kind: 'base', uuid: UUID })).toBe(`base:${UUID}`);
    expect(storageKey({ kind: 'ip', ip: '10.0.0.1' })).toBe('ip:10.0.0.1');
    expect(storageKey({ kind: 'ip', ip: '::1' })).toBe('ip:::1');
  });
});

describe('baseUuidFromParams', () => {
  it('normalizes dashed and 32-hex forms in any case to one key', () => {
    expect(baseUuidFromParams({ base_uuid: UUID })).toBe(UUID);
    expect(baseUuidFromParams({ base_uuid: HEX })).toBe(UUID);
    expect(baseUuidFromParams({ base_uuid: UUID.toUpperCase() })).toBe(UUID);
    expect(baseUuidFromParams({ base_uuid: HEX.toUpperCase() })).toBe(UUID);
  });

  it.each([[undefined], [null], [{}], [{ base_uuid: 'not-a-uuid' }], [{ base_uuid: 42 }], [{ base_uuid: `${HEX}0` }], [{ base_uuid: '' }]])(
    'gives null for %j',
    (params) => expect(baseUuidFromParams(params)).toBeNull(),
  );
});

describe('workspaceBaseFromParams', () => {
  it('reads workspace id and base name', () => {
    expect(workspaceBaseFromParams({ workspace_id: '12', base_name: 'My base' })).toEqual({ workspaceId: 12, baseName: 'My base' });
  });

  it.each([
    [undefined],
    [{ workspace_id: '12' }],
    [{ base_name: 'x' }],
    [{ workspace_id: '0', base_name: 'x' }],
    [{ workspace_id: '-1', base_name: 'x' }],
    [{ workspace_id: 'abc', base_name: 'x' }],
    [{ workspace_id: '1234567890123456', base_name: 'x' }],
    [{ workspace_id: '12', base_name: '' }],
    [{ workspace_id: 12, base_name: 'x' }],
  ])('gives null for %j', (params) => expect(workspaceBaseFromParams(params)).toBeNull());
});

describe('baseUuidFromBaseToken', () => {
  const jwt = (claims: Record<string, unknown>) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('any-key-any-key-any-key-any-key!'));

  it('reads dtable_uuid from Token and Bearer headers in any case', async () => {
    const token = await jwt({ dtable_uuid: HEX });
    for (const header of [`Token ${token}`, `Bearer ${token}`, `token ${token}`, `  BEARER   ${token} `]) {
      expect(baseUuidFromBaseToken(header)).toBe(UUID);
    }
  });

  it('gives null for anything that is not a Base-Token with a uuid claim', async () => {
    const cases = [
      undefined,
      '',
      'Token',
      `Basic ${Buffer.from('a:b').toString('base64')}`,
      'Token 0123456789abcdef0123456789abcdef01234567',
      'Token a.b.c',
      'Token a b',
      `Token ${await jwt({ other: 1 })}`,
      `Token ${await jwt({ dtable_uuid: 'nope' })}`,
      `Token ${await jwt({ dtable_uuid: 7 })}`,
    ];
    for (const header of cases) expect(baseUuidFromBaseToken(header)).toBeNull();
  });
});

describe('decide', () => {
  const now = Date.UTC(2026, 0, 5, 10, 0, 0) + 250;

  it('allows up to the limit and counts down the remainder', () => {
    expect(decide(3, 1, 60_000, now)).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    expect(decide(3, 3, 30_000, now)).toMatchObject({ allowed: true, remaining: 0 });
    expect(decide(3, 4, 30_000, now)).toMatchObject({ allowed: false, remaining: 0 });
    expect(decide(3, 100, 30_000, now)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('gives the reset as Unix seconds of the window end, rounded up, and Retry-After as seconds until then', () => {
    const d = decide(3, 4, 59_500, now);
    expect(d.resetAt).toBe(Math.ceil((now + 59_500) / 1000));
    expect(d.resetAt).toBe(Date.UTC(2026, 0, 5, 10, 1, 0) / 1000);
    expect(d.retryAfter).toBe(60);
    expect(decide(3, 4, 1, now).retryAfter).toBe(1);
    expect(decide(3, 4, 0, now).retryAfter).toBe(1);
    expect(decide(3, 4, 1_001, now).retryAfter).toBe(2);
  });

  it('treats a key without expiry (-1) as a fresh full window', () => {
    const d = decide(3, 1, -1, now);
    expect(d.retryAfter).toBe(60);
    expect(d.resetAt).toBe(Math.ceil((now + 60_000) / 1000));
  });

  it('renders the three usage headers as strings', () => {
    expect(usageHeaders(decide(500, 7, 30_000, now))).toEqual({
      'x-ratelimit-limit': '500',
      'x-ratelimit-remaining': '493',
      'x-ratelimit-reset': String(Math.ceil((now + 30_000) / 1000)),
    });
  });
});
