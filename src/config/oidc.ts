import { ConfigError, bool, int, optional, str, type Env } from './env.js';

/** OpenID Connect single sign-on (docs/security.md "Single sign-on"); absent unless OIDC_ISSUER is set. */
export interface OidcConfig {
  /** OIDC_ISSUER — the provider's issuer URL; its `/.well-known/openid-configuration` is read on first use. */
  issuer: string;
  /** OIDC_CLIENT_ID / OIDC_CLIENT_SECRET — this server's client at the provider (confidential client). */
  clientId: string;
  clientSecret: string;
  /** OIDC_REDIRECT_URI — where the provider sends the browser back: `<PUBLIC_URL>/api/v2.1/sso/oidc/callback/`. */
  redirectUri: string;
  /** OIDC_SCOPES — default `openid email profile`. */
  scopes: string;
  /** OIDC_ALLOWED_DOMAINS — comma-separated e-mail domains allowed to sign in; empty: any. */
  allowedDomains: readonly string[];
  /** OIDC_CREATE_USERS — create a user on first sign-in (else only existing users, matched by e-mail); default true. */
  createUsers: boolean;
  /** OIDC_ADMIN_CLAIM — `claim` (true makes an admin) or `claim=value` (the claim, or one of its list items, equals value); unset: the admin flag is not touched. */
  adminClaim: { name: string; value: string | null } | null;
  /** OIDC_TIMEOUT_MS — discovery and the token exchange must answer within this; default 10000. */
  timeoutMs: number;
  /** OIDC_ALLOW_HTTP — allow an http:// issuer (tests, a provider on localhost); default false. */
  allowHttp: boolean;
}

function url(env: Env, name: string): string {
  const value = optional(env, name);
  if (value === null) throw new ConfigError(name, 'is required when OIDC_ISSUER is set');
  try {
    const parsed = new URL(value);
    if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error('scheme');
  } catch {
    throw new ConfigError(name, 'must be an http(s) URL');
  }
  return value;
}

export function loadOidcConfig(env: Env): OidcConfig | null {
  if (optional(env, 'OIDC_ISSUER') === null) return null;
  const issuer = url(env, 'OIDC_ISSUER');
  const clientId = optional(env, 'OIDC_CLIENT_ID');
  if (clientId === null) throw new ConfigError('OIDC_CLIENT_ID', 'is required when OIDC_ISSUER is set');
  const clientSecret = optional(env, 'OIDC_CLIENT_SECRET');
  if (clientSecret === null) throw new ConfigError('OIDC_CLIENT_SECRET', 'is required when OIDC_ISSUER is set');
  const allowHttp = bool(env, 'OIDC_ALLOW_HTTP', false);
  if (!allowHttp && issuer.startsWith('http:')) throw new ConfigError('OIDC_ISSUER', 'must be https:// (or set OIDC_ALLOW_HTTP=true)');
  const domains = str(env, 'OIDC_ALLOWED_DOMAINS', '')
    .split(',')
    .map((d) => d.trim().toLowerCase())
    .filter(Boolean);
  for (const d of domains) if (!/^[a-z0-9.-]+$/.test(d)) throw new ConfigError('OIDC_ALLOWED_DOMAINS', `"${d}" is not a domain`);
  const claim = optional(env, 'OIDC_ADMIN_CLAIM');
  let adminClaim: OidcConfig['adminClaim'] = null;
  if (claim !== null) {
    const [name, ...rest] = claim.split('=');
    if (!name || !/^[\w.:-]{1,128}$/.test(name)) throw new ConfigError('OIDC_ADMIN_CLAIM', 'must be claim or claim=value');
    adminClaim = { name, value: rest.length > 0 ? rest.join('=') : null };
  }
  return Object.freeze({
    issuer,
    clientId,
    clientSecret,
    redirectUri: url(env, 'OIDC_REDIRECT_URI'),
    scopes: str(env, 'OIDC_SCOPES', 'openid email profile'),
    allowedDomains: Object.freeze(domains),
    createUsers: bool(env, 'OIDC_CREATE_USERS', true),
    adminClaim,
    timeoutMs: int(env, 'OIDC_TIMEOUT_MS', 10_000, 100, 120_000),
    allowHttp,
  });
}
