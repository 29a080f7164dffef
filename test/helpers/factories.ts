import { randomBytes } from 'node:crypto';
import type { TestApp } from './app.js';

export interface TestUser {
  id: number;
  email: string;
  virtualId: string;
  password: string;
  token: string;
}

/** A user (admin with `{ admin: true }`) and their Account-Token, made through the service and the login route. */
export async function createUser(t: TestApp, options: { email?: string; admin?: boolean; name?: string } = {}): Promise<TestUser> {
  const email = options.email ?? `user-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'password-123';
  const user = await t.container.accounts.createUser({ email, password, name: options.name, isStaff: options.admin });
  const res = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
  return { id: user.id, email, virtualId: user.virtualId, password, token: res.json<{ token: string }>().token };
}

export interface TestBase {
  id: number;
  uuid: string;
  name: string;
  workspaceId: number;
}

/**
 * A base in the owner's personal workspace, created through the HTTP API. A new base starts with a few
 * empty rows in `Table1` (as the original's blank base); suites that count rows start from an empty
 * `Table1`, so they are removed unless `{ blankRows: true }` (before anything reads the base, without events).
 */
export async function createBase(
  t: TestApp,
  owner: TestUser,
  name = `base-${randomBytes(3).toString('hex')}`,
  options: { blankRows?: boolean } = {},
): Promise<TestBase> {
  const res = await t.request({ method: 'POST', url: '/api/v2.1/dtables/', token: owner.token, payload: { name } });
  if (res.statusCode !== 201) throw new Error(`create base failed: ${res.body}`);
  const table = res.json<{ table: { id: number; uuid: string; name: string; workspace_id: number } }>().table;
  if (!options.blankRows) await removeBlankRows(t, table.id);
  return { id: table.id, uuid: table.uuid, name: table.name, workspaceId: table.workspace_id };
}

/** Removes the empty rows a new base starts with (a test's setup for "an empty Table1"). */
export async function removeBlankRows(t: TestApp, baseId: number): Promise<void> {
  await t.container.db.deleteFrom('base_rows').where('base_id', '=', baseId).execute();
}

/** `/api/v2.1/workspace/{id}/dtable/{encoded name}` + suffix. */
export function basePath(base: Pick<TestBase, 'workspaceId' | 'name'>, suffix = ''): string {
  return `/api/v2.1/workspace/${base.workspaceId}/dtable/${encodeURIComponent(base.name)}/${suffix}`;
}

/** A Base-Token for `user` on `base`, through the Account-Token access-token endpoint. */
export async function baseToken(t: TestApp, user: TestUser, base: TestBase): Promise<string> {
  const res = await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: user.token });
  if (res.statusCode !== 200) throw new Error(`access-token failed: ${res.body}`);
  return res.json<{ access_token: string }>().access_token;
}
