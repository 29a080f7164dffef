import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../shared/clock.js';
import type { BaseAccess, BaseTokenClaims } from '../access/index.js';
import { BaseTokenSigner, type VerifyResult } from './base-token.js';
import { BaseTokenVerifier } from './base-token-verifier.js';
import type { CredentialVersions } from './credential-versions.js';

const SECRET = 'unit-test-secret-key-unit-test-secret-key';
const claims = (appName: string): Omit<BaseTokenClaims, 'expiresAt'> => ({
  baseUuid: '650d8a0d-7e27-46a8-8b18-6cc6f3db2057',
  permission: 'r',
  username: '',
  ownerId: 'owner@auth.local',
  appName,
  source: 'api-token',
  sourceId: 12,
  version: 3,
});

// `verify` and `verifyCached` use the signer and the clock only: the base and revocation lookups are not reached.
const verifierWith = (signer: Pick<BaseTokenSigner, 'verify'>, clock: ManualClock) =>
  new BaseTokenVerifier(signer as BaseTokenSigner, {} as BaseAccess, {} as CredentialVersions, clock);

describe('BaseTokenVerifier, verified tokens kept by their last characters', () => {
  it("refuses a token that ends like a verified one (another payload under that token's signature)", async () => {
    const clock = new ManualClock();
    const signer = new BaseTokenSigner(SECRET, clock);
    const verifier = verifierWith(signer, clock);
    const { token } = signer.sign(claims('reader'));
    const [header, , signature] = token.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ dtable_uuid: 'x', permission: 'rw', src: 'api-token', sid: 1, ver: 0, exp: 4e9 })).toString('base64url')}.${signature}`;
    expect((await verifier.verify(token)).ok).toBe(true);
    expect(verifier.verifyCached(forged)).toBeUndefined();
    expect(await verifier.verify(forged)).toEqual({ ok: false, reason: 'invalid' });
    // The valid token is still answered from memory.
    expect(verifier.verifyCached(token)).toMatchObject({ ok: true, claims: { appName: 'reader', permission: 'r' } });
  });

  it("answers each token with its own claims when two valid tokens end alike, never the other's", async () => {
    const clock = new ManualClock();
    const expiresAt = Math.floor(clock.now() / 1000) + 60;
    // A signer that accepts anything and reads the app name from the token's first character: two valid tokens sharing their last 43.
    const calls: string[] = [];
    const signer = {
      async verify(token: string): Promise<VerifyResult> {
        calls.push(token[0]!);
        return { ok: true, claims: { ...claims(token[0]!), expiresAt } };
      },
    };
    const verifier = verifierWith(signer, clock);
    const tail = 's'.repeat(43);
    const [a, b] = [`a.${tail}`, `b.${tail}`];
    expect(await verifier.verify(a)).toMatchObject({ claims: { appName: 'a' } });
    expect(await verifier.verify(b)).toMatchObject({ claims: { appName: 'b' } });
    expect(verifier.verifyCached(b)).toMatchObject({ claims: { appName: 'b' } });
    expect(verifier.verifyCached(a)).toBeUndefined();
    expect(await verifier.verify(a)).toMatchObject({ claims: { appName: 'a' } });
    expect(calls).toEqual(['a', 'b', 'a']);
    // Expiry is still checked on every use of a kept token.
    clock.advance(60_000);
    expect(verifier.verifyCached(a)).toEqual({ ok: false, reason: 'expired' });
  });
});
