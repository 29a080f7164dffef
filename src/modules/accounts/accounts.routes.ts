import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError } from '../../shared/errors.js';
import { parsePage } from '../../shared/pagination.js';
import { isoSeconds } from '../../shared/time.js';
import { parseAuthorization } from '../../shared/authorization.js';
import { currentAccount } from './current-account.js';
import type { DeviceInfo } from './devices.js';
import type { AccountsService } from './accounts.service.js';
import type { UserRow } from './accounts.repository.js';
import {
  AdminUpdateUserBody,
  AuthTokenBody,
  ChangePasswordBody,
  AuthTokenResponse,
  CreateUserBody,
  PageQuery,
  Success,
  UpdateUserBody,
  UserListResponse,
  UserRecord,
} from './accounts.schemas.js';

const tags = ['accounts'];

export function accountsRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api2/auth-token/',
      { schema: { tags, body: AuthTokenBody, response: { 200: AuthTokenResponse } } },
      async (request, reply) => {
        const { username, password, device } = checkLoginBody(request.body);
        const header = (name: string) => {
          const value = request.headers[name];
          return typeof value === 'string' ? value : undefined;
        };
        const signedIn = await accounts.login(username, password, {
          otp: header('x-seafile-otp'),
          // The original reads `int(header) == 1`; anything else does not trust the device.
          trustDevice: header('x-seafile-2fa-trust-device')?.trim() === '1',
          trustedKey: header('x-seafile-s2fa')?.trim(),
          device,
          ip: request.ip,
        });
        if (signedIn.trustedKey !== undefined) reply.header('x-seafile-s2fa', signedIn.trustedKey);
        return { token: signedIn.token };
      },
    );

    app.get(
      '/api/v2.1/user/',
      { config: { auth: 'account', beforeTwoFactor: true }, schema: { tags, response: { 200: UserRecord } } },
      async (request) => userRecord(await mustFind(accounts, currentAccount(request).id)),
    );

    app.put(
      '/api/v2.1/user/',
      { config: { auth: 'account' }, schema: { tags, body: UpdateUserBody, response: { 200: UserRecord } } },
      async (request) => {
        const body = request.body ?? {};
        const user = await accounts.updateProfile(currentAccount(request), {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.email_notification !== undefined ? { emailNotification: body.email_notification } : {}),
        });
        return userRecord(await mustFind(accounts, user.id));
      },
    );

    // Not in the original's API (its web UI changes passwords): rotates the Account-Token.
    app.put(
      '/api/v2.1/user/password/',
      { config: { auth: 'account' }, schema: { tags, body: ChangePasswordBody, response: { 200: Success } } },
      async (request) => {
        await accounts.changePassword(currentAccount(request), request.body.old_password, request.body.new_password);
        return { success: true };
      },
    );

    // Revokes the caller's Account-Token (the original's clients just forget theirs).
    app.post(
      '/api2/logout/',
      { config: { auth: 'account', beforeTwoFactor: true }, schema: { tags, response: { 200: Success } } },
      async (request) => {
        const parsed = parseAuthorization(request.headers.authorization);
        await accounts.logout(currentAccount(request).id, parsed.kind === 'token' ? parsed.token : '');
        return { success: true };
      },
    );

    app.get(
      '/api/v2.1/admin/users/',
      { config: { auth: 'admin' }, schema: { tags, querystring: PageQuery, response: { 200: UserListResponse } } },
      async (request) => {
        const page = parsePage(request.query);
        const { users, total } = await accounts.listUsers(page.offset, page.perPage);
        return { data: users.map(userRecord), total_count: total };
      },
    );

    app.post(
      '/api/v2.1/admin/users/',
      { config: { auth: 'admin' }, schema: { tags, body: CreateUserBody, response: { 200: UserRecord } } },
      async (request) => {
        const user = await accounts.createUser({
          email: request.body.email,
          password: request.body.password,
          name: request.body.name,
          isStaff: request.body.is_staff,
        });
        return userRecord(await mustFind(accounts, user.id));
      },
    );

    app.put(
      '/api/v2.1/admin/users/:email/',
      {
        config: { auth: 'admin' },
        schema: { tags, params: Type.Object({ email: Type.String({ maxLength: 255 }) }), body: AdminUpdateUserBody, response: { 200: UserRecord } },
      },
      async (request) => {
        const body = request.body;
        const row = await accounts.adminUpdateUser(currentAccount(request), request.params.email, {
          ...(body.password !== undefined ? { password: body.password } : {}),
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.is_staff !== undefined ? { isStaff: body.is_staff } : {}),
          ...(body.is_active !== undefined ? { isActive: body.is_active } : {}),
        });
        return userRecord(row);
      },
    );

    app.delete(
      '/api/v2.1/admin/users/:email/',
      {
        config: { auth: 'admin' },
        schema: { tags, params: Type.Object({ email: Type.String({ maxLength: 255 }) }), response: { 200: Success } },
      },
      async (request) => {
        await accounts.deleteUser(currentAccount(request), request.params.email);
        return { success: true };
      },
    );
  };
}

function checkLoginBody(body: Record<string, unknown> | undefined): { username: string; password: string; device: DeviceInfo | undefined } {
  const fields: Record<string, string[]> = {};
  const value = (name: 'username' | 'password'): string => {
    const raw = body?.[name];
    if (raw === undefined || raw === null) fields[name] = ['This field is required.'];
    else if (typeof raw !== 'string') fields[name] = ['Not a valid string.'];
    else if (raw.trim() === '') fields[name] = ['This field may not be blank.'];
    else return raw;
    return '';
  };
  const username = value('username');
  const password = value('password');
  if (Object.keys(fields).length > 0) throw new AppError(400, fields);
  const device = ['platform', 'device_id', 'device_name'].filter((k) => body?.[k] !== undefined);
  if (device.length !== 0 && device.length !== 3) throw new AppError(400, { non_field_errors: ['invalid params'] });
  if (device.length === 0) return { username, password, device: undefined };
  const text = (k: string) => (typeof body?.[k] === 'string' ? (body[k] as string).trim() : '');
  if (text('platform') === '' || text('device_id') === '') throw new AppError(400, { non_field_errors: ['invalid params'] });
  return {
    username,
    password,
    device: { platform: text('platform'), deviceId: text('device_id'), deviceName: text('device_name') || text('platform'), clientVersion: text('client_version') },
  };
}

async function mustFind(accounts: AccountsService, id: number): Promise<UserRow> {
  const row = await accounts.findUserById(id);
  if (!row) throw new AppError(401, { detail: 'User inactive or deleted' });
  return row;
}

export function userRecord(row: UserRow) {
  return {
    email: row.virtual_id,
    name: row.name,
    contact_email: row.email,
    is_staff: row.is_staff === 1,
    is_active: row.is_active === 1,
    email_notification: row.email_notification === 1,
    create_time: isoSeconds(row.created_at),
  };
}
