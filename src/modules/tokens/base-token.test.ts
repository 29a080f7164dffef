import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import type { BaseTokenGrant } from '../access/index.js';
import { BASE_TOKEN_TTL_SECONDS, BaseTokenSigner } from './base-token.js';
import { credentialKey, keyOfClaims } from './credential-versions.js';
import { TEMP_API_TOKEN_TTL_SECONDS, TempApiTokens } from './temp-api-token.js';

const SECRET = 'unit-test-secret-key-unit-test-secret-key';
const grant: BaseTokenGrant = {
  baseUuid: '650d8a0d-7e27-46a8-8b18-6cc6f3db2057',
  permission: 'r',
  username: '',
  ownerId: 'owner@auth.local',
  appName: 'postman',
  source: 'api-token',
  sourceId: 12,
  version: 3,
};

describe('BaseTokenSigner', () => {
  it('round-trips the grant and carries the original claim names', async () => {
    const clock = new ManualClock();
    const signer = new BaseTokenSigner(SECRET, clock);
    const { token, expiresAt } = await signer.sign(grant);
    const now = Math.floor(clock.now() / 1000);
    expect(expiresAt).toBe(now + BASE_TOKEN_TTL_SECONDS);
    expect(decodeJwt(token)).toMatchObject({ dtable_uuid: grant.baseUuid, permission: 'r', username: '', app_name: 'postman', owner_id: 'owner@auth.local', exp: expiresAt });
    expect(await signer.verify(token)).toEqual({ ok: true, claims: { ...grant, expiresAt } });
  });

  it('shortens the lifetime to notAfter, never lengthens it', async () => {
    const clock = new ManualClock();
    const signer = new BaseTokenSigner(SECRET, clock);
    const now = Math.floor(clock.now() / 1000);
    expect((await signer.sign(grant, now + 60)).expiresAt).toBe(now + 60);
    expect((await signer.sign(grant, now + 10 * BASE_TOKEN_TTL_SECONDS)).expiresAt).toBe(now + BASE_TOKEN_TTL_SECONDS);
  });

  it('reports expiry apart from other failures', async () => {
    const clock = new ManualClock();
    const signer = new BaseTokenSigner(SECRET, clock);
    const { token } = await signer.sign(grant);
    clock.advance(BASE_TOKEN_TTL_SECONDS * 1000);
    expect(await signer.verify(token)).toEqual({ ok: false, reason: 'expired' });
    expect(await new BaseTokenSigner(`${SECRET}x`, clock).verify(token)).toEqual({ ok: false, reason: 'invalid' });
  });
});

describe('TempApiTokens', () => {
  it('is valid for exactly one hour and not a Base-Token', async () => {
    const clock = new ManualClock();
    const temp = new TempApiTokens(SECRET, clock);
    const token = await temp.sign({ baseUuid: grant.baseUuid, username: 'u@auth.local', userId: 5 });
    const claims = { baseUuid: grant.baseUuid, username: 'u@auth.local', userId: 5, expiresAt: Math.floor(clock.now() / 1000) + TEMP_API_TOKEN_TTL_SECONDS };
    expect(await temp.verify(token)).toEqual(claims);
    expect(await new BaseTokenSigner(SECRET, clock).verify(token)).toEqual({ ok: false, reason: 'invalid' });
    expect(await temp.verify((await new BaseTokenSigner(SECRET, clock).sign(grant)).token)).toBeNull();
    clock.advance(TEMP_API_TOKEN_TTL_SECONDS * 1000 - 1000);
    expect(await temp.verify(token)).toEqual(claims);
    clock.advance(1000);
    expect(await temp.verify(token)).toBeNull();
  });
});

describe('keyOfClaims', () => {
  it('maps each source to the credential that can revoke it', () => {
    expect(keyOfClaims({ source: 'api-token', sourceId: 4 }, 9)).toBe(credentialKey.apiToken(4));
    expect(keyOfClaims({ source: 'external-link', sourceId: 4 }, 9)).toBe(credentialKey.externalLink(4));
    expect(keyOfClaims({ source: 'account', sourceId: 4 }, 9)).toBe(credentialKey.share(9, 4));
    expect(keyOfClaims({ source: 'temp-api-token', sourceId: 4 }, 9)).toBe(credentialKey.share(9, 4));
  });
});
