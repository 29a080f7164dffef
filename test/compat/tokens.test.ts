import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { newWebApiClient, type DTableWebAPIClient } from './dtable-web-api.js';

const require = createRequire(import.meta.url);

interface SeaTableBase {
  auth(): Promise<void>;
  getDTable(): Promise<Record<string, unknown>>;
  appName: string;
  dtableUuid: string;
  dtableServer: string;
}
const { Base } = require('seatable-api') as { Base: new (config: { server: string; APIToken: string }) => SeaTableBase };

interface McpClient {
  getBaseInfo(): { dtableUuid?: string; appName?: string };
}

/** What the clients sent, seen on the raw HTTP server next to Fastify's own handler. */
const seen: Array<{ url: string; authorization: string | undefined }> = [];

describe.each(DIALECTS)('token clients against a listening server (%s)', (dialect) => {
  let t: TestApp;
  let server: string;
  let owner: TestUser;
  let base: TestBase;
  let web: DTableWebAPIClient;

  const newApiToken = async (appName: string, permission: 'r' | 'rw') => (await web.addTableAPIToken(base.workspaceId, base.name, appName, permission)).data.api_token as string;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    t.app.server.on('request', (req: IncomingMessage) => void seen.push({ url: req.url ?? '', authorization: req.headers.authorization }));
    owner = await createUser(t);
    base = await createBase(t, owner, 'Client base: tokens & more');
    web = newWebApiClient().init({ server, token: owner.token });
  });
  afterAll(() => t.close());

  describe('dtable-web-api', () => {
    it('adds, lists, updates and deletes API-Tokens', async () => {
      const added = await web.addTableAPIToken(base.workspaceId, base.name, 'Client app/1', 'rw');
      expect(added.status).toBe(201);
      expect(added.data).toMatchObject({ app_name: 'Client app/1', permission: 'rw', generated_by: owner.virtualId });
      expect(added.data.api_token).toMatch(/^[0-9a-f]{40}$/);

      const listed = await web.listTableAPITokens(base.workspaceId, base.name);
      expect(listed.data.api_tokens).toEqual([{ ...added.data, api_token: `${'*'.repeat(36)}${added.data.api_token.slice(-4)}` }]);

      const updated = await web.updateTableAPIToken(base.workspaceId, base.name, 'Client app/1', 'r');
      expect(updated.status).toBe(200);
      expect(updated.data.permission).toBe('r');

      const refused = await web.updateTableAPIToken(base.workspaceId, base.name, 'Client app/1', 'r').catch((e: { response: unknown }) => e.response);
      expect(refused).toMatchObject({ status: 400, data: { error_msg: 'api token already has r permission.' } });
      const duplicate = await web.addTableAPIToken(base.workspaceId, base.name, 'Client app/1', 'r').catch((e: { response: unknown }) => e.response);
      expect(duplicate).toMatchObject({ status: 400, data: { error_msg: 'api token already exist.' } });

      const deleted = await web.deleteTableAPIToken(base.workspaceId, base.name, 'Client app/1');
      expect(deleted.data).toEqual({ success: true });
      expect((await web.listTableAPITokens(base.workspaceId, base.name)).data.api_tokens).toEqual([]);
      const gone = await web.deleteTableAPIToken(base.workspaceId, base.name, 'Client app/1').catch((e: { response: unknown }) => e.response);
      expect(gone).toMatchObject({ status: 404, data: { error_msg: 'api token not found.' } });
    });

    it('gets a temporary API-Token, a Base-Token and a Base-Token through an external link', async () => {
      const temp = await web.getDTableTempAPIToken(base.workspaceId, base.name);
      expect(decodeJwt(temp.data.api_token)).toMatchObject({ dtable_uuid: base.uuid, username: owner.virtualId });

      const access = await web.getTableAccessToken(base.workspaceId, base.name);
      expect(access.data).toMatchObject({ dtable_uuid: base.uuid, workspace_id: base.workspaceId, use_api_gateway: true });
      expect(decodeJwt(access.data.access_token).permission).toBe('rw');

      const link = await web.createDTableExternalLink(base.workspaceId, base.name);
      const byLink = await web.getTableAccessTokenByExternalLink(link.data.token);
      expect(byLink.data.dtable_uuid).toBe(base.uuid);
      expect(decodeJwt(byLink.data.access_token).permission).toBe('r');
      const unknown = await web.getTableAccessTokenByExternalLink('0000deadbeef0000beef').catch((e: { response: unknown }) => e.response);
      expect(unknown).toMatchObject({ status: 404, data: { error_msg: 'Token 0000deadbeef0000beef not found' } });
    });
  });

  describe('seatable-api', () => {
    it('authenticates with an API-Token and reads the base through the gateway', async () => {
      const apiToken = await newApiToken('seatable-api', 'rw');
      const client = new Base({ server, APIToken: apiToken });
      await client.auth();
      expect(client.appName).toBe('seatable-api');
      expect(client.dtableUuid).toBe(base.uuid);
      const dtable = await client.getDTable();
      expect(dtable).toBeTypeOf('object');
      expect(seen.some((r) => r.url === `/api-gateway/api/v2/dtables/${base.uuid}/` && r.authorization?.startsWith('Token '))).toBe(true);
    });

    it('authenticates with a temporary API-Token', async () => {
      const temp = (await web.getDTableTempAPIToken(base.workspaceId, base.name)).data.api_token;
      const client = new Base({ server, APIToken: temp });
      await client.auth();
      expect(client.appName).toBe('scripts');
      expect(client.dtableUuid).toBe(base.uuid);
      await expect(client.getDTable()).resolves.toBeTypeOf('object');
    });

    it('fails auth() with 403 for an unknown token', async () => {
      const client = new Base({ server, APIToken: 'f'.repeat(40) });
      await expect(client.auth()).rejects.toMatchObject({ response: { status: 403, data: { error_msg: 'Permission denied.' } } });
    });
  });

  describe('@seatable/mcp-seatable', () => {
    it('exchanges its API-Token with Bearer and calls the gateway with the Base-Token', async () => {
      process.env.LOG_LEVEL ??= 'warn'; // the client logs at info to stderr otherwise
      const { SeaTableClient } = (await import('@seatable/mcp-seatable')) as unknown as { SeaTableClient: new (config: { serverUrl: string; apiToken: string }) => McpClient };
      const apiToken = await newApiToken('mcp', 'r');
      const client = new SeaTableClient({ serverUrl: server, apiToken });
      // The client exchanges lazily before its first call; `request` is how its tools reach the gateway.
      const internals = client as unknown as { request(op: string, fn: (http: { get(url: string): Promise<{ status: number }> }) => Promise<number>): Promise<number> };
      const status = await internals.request('probe', async (http) => (await http.get('/')).status);
      expect(status).toBe(200);
      expect(client.getBaseInfo()).toEqual({ dtableUuid: base.uuid, appName: 'mcp' });
      const exchange = seen.filter((r) => r.url === '/api/v2.1/dtable/app-access-token/' && r.authorization === `Bearer ${apiToken}`);
      expect(exchange).toHaveLength(1);
      const gatewayCall = seen.filter((r) => r.url === `/api-gateway/api/v2/dtables/${base.uuid}/`).at(-1);
      expect(gatewayCall?.authorization).toMatch(/^Bearer ey/);
    });
  });
});
