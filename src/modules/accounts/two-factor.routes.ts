import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { notFound } from '../../shared/errors.js';
import { isoSeconds } from '../../shared/time.js';
import { currentAccount } from './current-account.js';
import type { AccountsService } from './accounts.service.js';

const tags = ['accounts'];
const CodeBody = Type.Object({ code: Type.Optional(Type.String({ maxLength: 64 })) });
const Success = Type.Object({ success: Type.Boolean() });
const UserParam = Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 255 }) });

/**
 * Two-factor sign-in and per-device Account-Tokens (issue 33 item 3).
 * The original serves the admin side (`PUT /api/v2.1/admin/users/{user_id}/two-factor-auth/` to force
 * it, `DELETE /api2/two-factor-auth/{user_id}/` to turn it off) and reads `X-SEAFILE-OTP` at sign-in;
 * its users enrol in the web UI, so the user-side routes (`/api/v2.1/user/two-factor-auth/`) are ours.
 * `GET`/`DELETE /api2/devices/` follow Seafile's device list.
 */
export function twoFactorRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    const base = '/api/v2.1/user/two-factor-auth/';
    app.get(base, { config: { auth: 'account', beforeTwoFactor: true }, schema: { tags, summary: 'Two-factor status' } }, async (request) =>
      accounts.twoFactor.status(currentAccount(request).id),
    );

    app.post(base, { config: { auth: 'account', beforeTwoFactor: true }, schema: { tags, summary: 'Start two-factor enrolment', description: 'Returns a new TOTP secret and its otpauth:// URI (for a QR code) once; confirm with PUT and a code.' } }, async (request, reply) => {
      const user = currentAccount(request);
      reply.header('cache-control', 'no-store');
      return accounts.twoFactor.begin(user.id, user.email);
    });

    app.put(base, { config: { auth: 'account', beforeTwoFactor: true }, schema: { tags, summary: 'Confirm two-factor enrolment', body: CodeBody } }, async (request, reply) => {
      const codes = await accounts.twoFactor.confirm(currentAccount(request).id, request.body.code);
      reply.header('cache-control', 'no-store');
      return { success: true, recovery_codes: codes };
    });

    // No body schema: a DELETE may come without a body (then the code is missing: 400 from the service).
    app.delete(base, { config: { auth: 'account' }, schema: { tags, summary: 'Turn two-factor sign-in off', response: { 200: Success } } }, async (request) => {
      const body = request.body as { code?: unknown } | undefined;
      await accounts.twoFactor.disableWithCode(currentAccount(request).id, body?.code);
      return { success: true };
    });

    app.post(`${base}recovery-codes/`, { config: { auth: 'account' }, schema: { tags, summary: 'New recovery codes', body: CodeBody } }, async (request, reply) => {
      const codes = await accounts.twoFactor.regenerateRecoveryCodes(currentAccount(request).id, request.body.code);
      reply.header('cache-control', 'no-store');
      return { recovery_codes: codes };
    });

    app.put(
      '/api/v2.1/admin/users/:user_id/two-factor-auth/',
      { config: { auth: 'admin' }, schema: { tags, summary: 'Enforce 2FA', params: UserParam, body: Type.Object({ force_2fa: Type.Union([Type.Integer({ minimum: 0, maximum: 1 }), Type.String({ pattern: '^[01]$' }), Type.Boolean()]) }), response: { 200: Success } } },
      async (request) => {
        const user = await accounts.findUser(request.params.user_id);
        if (!user) throw notFound(`User ${request.params.user_id} not found.`);
        const value = request.body.force_2fa;
        await accounts.twoFactor.setForced(user.id, value === 1 || value === '1' || value === true);
        return { success: true };
      },
    );

    app.delete('/api2/two-factor-auth/:user_id/', { config: { auth: 'admin' }, schema: { tags, summary: 'Disable 2FA', params: UserParam, response: { 200: Success } } }, async (request) => {
      const user = await accounts.findUser(request.params.user_id);
      if (!user) throw notFound(`User ${request.params.user_id} not found.`);
      await accounts.twoFactor.disable(user.id);
      return { success: true };
    });

    app.get('/api2/devices/', { config: { auth: 'account' }, schema: { tags, summary: 'List my signed-in devices' } }, async (request) => {
      const rows = await accounts.devices.list(currentAccount(request).id);
      return rows.map((row) => ({
        platform: row.platform,
        device_id: row.device_id,
        device_name: row.device_name,
        client_version: row.client_version,
        last_login_ip: row.last_login_ip,
        last_accessed: isoSeconds(row.last_accessed),
        created_at: isoSeconds(row.created_at),
        is_desktop_client: ['windows', 'linux', 'mac'].includes(row.platform),
      }));
    });

    app.delete(
      '/api2/devices/',
      { config: { auth: 'account' }, schema: { tags, summary: "Revoke a device's Account-Token", body: Type.Object({ platform: Type.String({ minLength: 1, maxLength: 64 }), device_id: Type.String({ minLength: 1, maxLength: 255 }) }), response: { 200: Success } } },
      async (request) => {
        const ok = await accounts.devices.revoke(currentAccount(request).id, request.body.platform, request.body.device_id);
        if (!ok) throw notFound('Device not found.');
        return { success: true };
      },
    );
  };
}
