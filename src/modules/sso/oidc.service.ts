import * as client from 'openid-client';
import type { Db } from '../../db/index.js';
import type { OidcConfig } from '../../config/index.js';
import type { Clock } from '../../shared/clock.js';
import { apiError, badRequest } from '../../shared/errors.js';
import { sha256Hex } from '../../shared/crypto.js';
import type { AccountsService, AccountUser } from '../accounts/index.js';

/** A started sign-in must come back within this. */
const LOGIN_TTL_MS = 10 * 60_000;
/** Started sign-ins kept at most (older ones are dropped first), so anonymous starts cannot grow the table. */
const MAX_PENDING = 10_000;

export interface SsoSignIn {
  token: string;
  user: AccountUser;
  created: boolean;
}

/**
 * OpenID Connect sign-in with `openid-client`: authorization code flow with PKCE (S256), `state` and
 * `nonce`. A started sign-in is a row (state hash → verifier, nonce) so any instance can finish it,
 * and it is deleted when used (a replayed callback finds nothing). The provider's metadata is
 * discovered on first use and kept; a failed discovery is retried on the next sign-in.
 */
export class OidcService {
  private configuration: Promise<client.Configuration> | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: OidcConfig,
    private readonly accounts: AccountsService,
  ) {}

  private discover(): Promise<client.Configuration> {
    this.configuration ??= client
      .discovery(new URL(this.config.issuer), this.config.clientId, undefined, client.ClientSecretBasic(this.config.clientSecret), {
        timeout: Math.ceil(this.config.timeoutMs / 1000),
        ...(this.config.allowHttp ? { execute: [client.allowInsecureRequests] } : {}),
      })
      .catch((error: unknown) => {
        this.configuration = null;
        throw apiError(502, `The identity provider could not be reached: ${error instanceof Error ? error.message : String(error)}`);
      });
    return this.configuration;
  }

  /** The provider's authorization URL for a new sign-in. */
  async start(): Promise<URL> {
    const configuration = await this.discover();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const verifier = client.randomPKCECodeVerifier();
    const now = this.clock.now();
    await this.db.deleteFrom('oidc_logins').where('created_at', '<', now - LOGIN_TTL_MS).execute();
    const pending = await this.db.selectFrom('oidc_logins').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    if (Number(pending.n) >= MAX_PENDING) {
      const oldest = await this.db.selectFrom('oidc_logins').select('created_at').orderBy('created_at').offset(MAX_PENDING / 10).limit(1).executeTakeFirst();
      if (oldest) await this.db.deleteFrom('oidc_logins').where('created_at', '<=', oldest.created_at).execute();
    }
    await this.db.insertInto('oidc_logins').values({ state_hash: sha256Hex(state), code_verifier: verifier, nonce, created_at: now }).execute();
    return client.buildAuthorizationUrl(configuration, {
      redirect_uri: this.config.redirectUri,
      scope: this.config.scopes,
      state,
      nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  }

  /**
   * The callback: `state` must name a started sign-in (used once, within 10 minutes); the code is
   * exchanged with the PKCE verifier and the ID token checked (issuer, audience, signature, nonce);
   * claims the ID token lacks (e-mail, the admin claim) are read from the UserInfo endpoint (same subject).
   * The user is matched by e-mail (created on first sign-in unless OIDC_CREATE_USERS=false).
   */
  async finish(query: Record<string, unknown>): Promise<SsoSignIn> {
    const state = typeof query.state === 'string' ? query.state : '';
    if (state === '' || state.length > 512) throw badRequest('state missing.');
    const gone = await this.db.deleteFrom('oidc_logins').where('state_hash', '=', sha256Hex(state)).returningAll().executeTakeFirst();
    if (!gone || gone.created_at < this.clock.now() - LOGIN_TTL_MS) throw badRequest('state invalid or expired: start the sign-in again.');
    if (typeof query.error === 'string') throw apiError(403, `The identity provider refused the sign-in: ${query.error.slice(0, 200)}`);
    if (typeof query.code !== 'string' || query.code === '') throw badRequest('code missing.');
    const configuration = await this.discover();
    const callback = new URL(this.config.redirectUri);
    for (const [key, value] of Object.entries(query)) if (typeof value === 'string') callback.searchParams.set(key, value);
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callback, {
        pkceCodeVerifier: gone.code_verifier,
        expectedState: state,
        expectedNonce: gone.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims();
      if (!idToken) throw new Error('no ID token');
      claims = { ...idToken };
      // Many providers put profile claims (e-mail, groups) only in the UserInfo answer, not the ID token.
      if (typeof claims.email !== 'string' || (this.config.adminClaim && claims[this.config.adminClaim.name] === undefined)) {
        const info = await client.fetchUserInfo(configuration, tokens.access_token, idToken.sub);
        claims = { ...info, ...idToken, ...(typeof idToken.email === 'string' ? {} : { email: info.email, email_verified: info.email_verified }) };
        if (this.config.adminClaim && idToken[this.config.adminClaim.name] === undefined) claims[this.config.adminClaim.name] = info[this.config.adminClaim.name];
      }
    } catch (error) {
      throw apiError(400, `The sign-in could not be completed: ${error instanceof Error ? error.message : String(error)}`);
    }
    return this.signIn(claims);
  }

  private async signIn(claims: Record<string, unknown>): Promise<SsoSignIn> {
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
    if (email === '') throw apiError(403, 'The identity provider did not send an e-mail address (scope email).');
    if (claims.email_verified === false) throw apiError(403, `The e-mail address ${email} is not verified at the identity provider.`);
    const domain = email.split('@')[1] ?? '';
    if (this.config.allowedDomains.length > 0 && !this.config.allowedDomains.includes(domain)) {
      throw apiError(403, `Sign-in with an e-mail address of ${domain} is not allowed (OIDC_ALLOWED_DOMAINS).`);
    }
    const name = typeof claims.name === 'string' ? claims.name : undefined;
    return this.accounts.signInByEmail(email, { name, isStaff: this.isAdmin(claims), create: this.config.createUsers });
  }

  private isAdmin(claims: Record<string, unknown>): boolean | undefined {
    const rule = this.config.adminClaim;
    if (!rule) return undefined;
    const value = claims[rule.name];
    if (rule.value === null) return value === true || value === 'true';
    return Array.isArray(value) ? value.map(String).includes(rule.value) : String(value) === rule.value;
  }
}
