import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** An account of the identity provider; `claims` are what its ID token says. */
export interface IdpAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in at the provider's next interaction (the test plays the user). */
  signInAs(account: IdpAccount): void;
  /**
   * Plays the browser: follows the provider's redirects from `authorizationUrl` (carrying its cookies)
   * through the sign-in, and returns the URL the provider sends the browser back to (our callback).
   */
  authorize(authorizationUrl: string): Promise<URL>;
  close(): Promise<void>;
}

/**
 * A real OpenID Connect provider (`oidc-provider`), in-process on a random port, with one confidential
 * client. Its interaction (login + consent) is answered by this server for the account set with
 * `signInAs`, the way a user would at a real provider's form.
 */
export async function startTestIdp(redirectUri: string): Promise<TestIdp> {
  const clientId = 'basegate-test';
  const clientSecret = 'basegate-test-client-secret-0123456789';
  let current: IdpAccount = { sub: 'nobody' };
  const accounts = new Map<string, IdpAccount>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'] }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    cookies: { keys: ['test-idp-cookie-key-0123456789'] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    findAccount: (_ctx: unknown, id: string) => {
      const account = accounts.get(id);
      return account ? { accountId: id, claims: () => ({ ...account }) } : undefined;
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  });
  provider.proxy = false;
  const callback = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/interaction/')) {
      void (async () => {
        const details = await provider.interactionDetails(req, res);
        accounts.set(current.sub, current);
        const grant = new provider.Grant({ accountId: current.sub, clientId: details.params.client_id });
        grant.addOIDCScope(String(details.params.scope));
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId: current.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
      })().catch((error: Error) => {
        res.statusCode = 500;
        res.end(error.message);
      });
      return;
    }
    callback(req, res);
  });

  const cookies = new Map<string, string>();
  async function authorize(authorizationUrl: string): Promise<URL> {
    // A fresh browser each time: no session at the provider, so it asks who signs in.
    cookies.clear();
    let url = new URL(authorizationUrl);
    for (let hop = 0; hop < 10; hop += 1) {
      if (url.origin !== issuer) return url;
      const res = await fetch(url, { redirect: 'manual', headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; ') }, signal: AbortSignal.timeout(10_000) });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair!.indexOf('=');
        cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
      }
      const location = res.headers.get('location');
      if (!location) throw new Error(`the provider answered ${res.status} without a redirect: ${await res.text()}`);
      url = new URL(location, url);
    }
    throw new Error('too many redirects at the provider');
  }

  return {
    issuer,
    clientId,
    clientSecret,
    signInAs(account) {
      current = account;
    },
    authorize,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
