import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { apiError } from '../../shared/errors.js';
import type { OidcService } from './oidc.service.js';

const tags = ['accounts'];
const CallbackQuery = Type.Object(
  { code: Type.Optional(Type.String({ maxLength: 4096 })), state: Type.Optional(Type.String({ maxLength: 512 })), error: Type.Optional(Type.String({ maxLength: 512 })) },
  { additionalProperties: Type.String({ maxLength: 4096 }) },
);

/**
 * OpenID Connect single sign-on (ours; the original's SSO is in its web UI). `GET …/sso/oidc/` tells the
 * console whether to show the button; `…/login/` redirects to the provider; the provider redirects back
 * to `…/callback/`, which answers the Account-Token: JSON to a client asking for JSON, else a redirect to
 * the console (`/#sso=<token>`; the fragment never reaches a server and the console removes it at once).
 */
export function ssoRoutes(oidc: OidcService | null): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/api/v2.1/sso/oidc/', { schema: { tags, summary: 'Is OpenID Connect sign-in configured' } }, async () => ({
      enabled: oidc !== null,
      login_url: oidc ? '/api/v2.1/sso/oidc/login/' : null,
    }));

    const configured = (): OidcService => {
      if (!oidc) throw apiError(404, 'Single sign-on is not configured (OIDC_ISSUER).');
      return oidc;
    };

    app.get('/api/v2.1/sso/oidc/login/', { schema: { tags, summary: 'Start an OpenID Connect sign-in' } }, async (_request, reply) => {
      const url = await configured().start();
      return reply.header('cache-control', 'no-store').redirect(url.href, 302);
    });

    app.get('/api/v2.1/sso/oidc/callback/', { schema: { tags, summary: 'Finish an OpenID Connect sign-in', querystring: CallbackQuery } }, async (request, reply) => {
      const signedIn = await configured().finish(request.query as Record<string, unknown>);
      // The audit trail names the account (plugins/audit-trail.ts).
      request.account = signedIn.user;
      reply.header('cache-control', 'no-store');
      if (String(request.headers.accept ?? '').includes('application/json')) {
        return { token: signedIn.token, email: signedIn.user.email, created: signedIn.created };
      }
      return reply.redirect(`/#sso=${signedIn.token}`, 302);
    });
  };
}
