import { basePath, baseToken, createBase, createUser, type TestApp, type TestBase, type TestUser } from './index.js';

/** Who can hold a Base-Token: the base's users by permission, API-Tokens, and an external link. */
export type GatewayRole = 'owner' | 'admin' | 'rw' | 'r' | 'api-rw' | 'api-r' | 'link';
export const WRITE_ROLES: GatewayRole[] = ['owner', 'admin', 'rw', 'api-rw'];
export const READ_ONLY_ROLES: GatewayRole[] = ['r', 'api-r', 'link'];

export interface RoleSet {
  users: { owner: TestUser; admin: TestUser; rw: TestUser; r: TestUser; none: TestUser };
  /** A Base-Token for each role, issued through the real endpoints. */
  tokens: Record<GatewayRole, string>;
  /** The API-Tokens themselves (for API-Token routes such as app-user-info). */
  apiTokens: { rw: string; r: string };
}

async function ok<T>(label: string, res: { statusCode: number; body: string; json<U>(): U }): Promise<T> {
  if (res.statusCode >= 300) throw new Error(`${label} failed: ${res.statusCode} ${res.body}`);
  return res.json<T>();
}

/** Shares `base` with an admin, an rw and an r user, makes a stranger, two API-Tokens and an external link. */
export async function roleSet(t: TestApp, owner: TestUser, base: TestBase): Promise<RoleSet> {
  const users = { owner, admin: await createUser(t), rw: await createUser(t), r: await createUser(t), none: await createUser(t) };
  for (const role of ['admin', 'rw', 'r'] as const) {
    await ok('share', await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: users[role].email, permission: role } }));
  }
  const apiTokens = { rw: '', r: '' };
  const apiBaseTokens = { rw: '', r: '' };
  for (const permission of ['rw', 'r'] as const) {
    const created = await ok<{ api_token: string }>('api token', await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: `roles-${permission}`, permission } }));
    apiTokens[permission] = created.api_token;
    const access = await ok<{ access_token: string }>('app-access-token', await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${created.api_token}` } }));
    apiBaseTokens[permission] = access.access_token;
  }
  const link = await ok<{ token: string }>('external link', await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload: {} }));
  const linkAccess = await ok<{ access_token: string }>('link access-token', await t.request({ method: 'GET', url: `/api/v2.1/external-link-tokens/${link.token}/access-token/` }));
  return {
    users,
    apiTokens,
    tokens: {
      owner: await baseToken(t, owner, base),
      admin: await baseToken(t, users.admin, base),
      rw: await baseToken(t, users.rw, base),
      r: await baseToken(t, users.r, base),
      'api-rw': apiBaseTokens.rw,
      'api-r': apiBaseTokens.r,
      link: linkAccess.access_token,
    },
  };
}

/** A user "Olga Owner" with a new base, shared with every role (see roleSet). */
export async function baseWithRoles(t: TestApp): Promise<{ owner: TestUser; base: TestBase; roles: RoleSet }> {
  const owner = await createUser(t, { name: 'Olga Owner' });
  const base = await createBase(t, owner);
  return { owner, base, roles: await roleSet(t, owner, base) };
}
