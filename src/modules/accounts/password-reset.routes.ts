import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AccountsService } from './accounts.service.js';
import { resetPassword } from './password-reset.js';

const ResetPasswordResponse = Type.Object({ new_password: Type.String(), reset_tip: Type.String() });

/**
 * `PUT /api/v2.1/admin/users/{user_id}/reset-password/` (system admin): a new random password for
 * the user (by e-mail or user id), returned once; the user's Account-Token stops working.
 */
export function passwordResetRoutes(accounts: AccountsService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.put(
      '/api/v2.1/admin/users/:user_id/reset-password/',
      {
        config: { auth: 'admin' },
        schema: {
          tags: ['accounts'],
          summary: "Reset a user's password",
          description:
            'Sets a new random password for the user (given by e-mail or user id) and returns it once. The user is signed out everywhere: their Account-Token stops working. No e-mail is sent: hand the password over yourself.',
          params: Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 255 }) }),
          response: { 200: ResetPasswordResponse },
        },
      },
      async (request) => {
        const { user, password } = await resetPassword(accounts, request.params.user_id);
        return { new_password: password, reset_tip: `Successfully reset password to ${password} for ${user.email}.` };
      },
    );
  };
}
