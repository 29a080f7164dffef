import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { newWebApiClient, type DTableWebAPIClient } from './dtable-web-api.js';

describe.each(DIALECTS)('dtable-web-api against a listening server: foundation (%s)', (dialect) => {
  let t: TestApp;
  let server: string;
  let alice: TestUser;
  let bob: TestUser;
  let client: DTableWebAPIClient;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = await createUser(t, { email: 'alice@example.com', name: 'Alice' });
    bob = await createUser(t, { email: 'bob@example.com', name: 'Bob' });
    client = newWebApiClient().init({ server, username: alice.email, password: alice.password });
    await client.login();
  });
  afterAll(() => t.close());

  it('logs in with a JSON body and receives the Account-Token', () => {
    expect(client.token).toBe(alice.token);
  });

  it('creates a base with multipart and finds it in listWorkspaces', async () => {
    const created = await client.createTable('Client base', alice.email);
    expect(created.status).toBe(201);
    expect(created.data.table.name).toBe('Client base');
    const list = await client.listWorkspaces();
    const personal = list.data.workspace_list.find((w: { type: string }) => w.type === 'personal');
    expect(personal.table_list.map((b: { name: string }) => b.name)).toContain('Client base');
  });

  it('shares the base with another user', async () => {
    const workspaceId = (await client.listWorkspaces()).data.workspace_list.find((w: { type: string }) => w.type === 'personal').id;
    const res = await client.addTableShare(workspaceId, 'Client base', bob.email, 'rw');
    expect(res.status).toBe(201);
    const shares = await client.listTableShares(workspaceId, 'Client base');
    expect(shares.data.user_list).toEqual([expect.objectContaining({ email: bob.virtualId, permission: 'rw' })]);
  });

  it('creates and lists external links, then deletes the base', async () => {
    const workspaceId = (await client.listWorkspaces()).data.workspace_list.find((w: { type: string }) => w.type === 'personal').id;
    const link = await client.createDTableExternalLink(workspaceId, 'Client base', 'client-custom', 'link-password', 7);
    expect(link.status).toBe(200);
    expect(link.data).toMatchObject({ token: 'client-custom', is_custom: true, permission: 'read-only' });
    const random = await client.createDTableExternalLink(workspaceId, 'Client base');
    expect(random.data.token).toMatch(/^[0-9a-f]{20}$/);
    const links = await client.getDTableExternalLink(workspaceId, 'Client base');
    // Tokens are stored hashed (issue 17), so listings show them masked but for the last four characters.
    expect(links.data.links.map((l: { token: string }) => l.token).sort()).toEqual(['********stom', `${'*'.repeat(16)}${random.data.token.slice(-4)}`].sort());

    const deleted = await client.deleteTable(workspaceId, 'Client base');
    expect(deleted.data).toEqual({ success: true });
    const after = await client.listWorkspaces();
    expect(after.data.workspace_list.find((w: { type: string }) => w.type === 'personal').table_list).toEqual([]);
  });

  it('surfaces contract errors to the client as HTTP errors', async () => {
    await expect(client.createTable('', alice.email)).rejects.toMatchObject({ response: { status: 400 } });
    await expect(client.addTableShare(99999, 'missing', bob.email, 'r')).rejects.toMatchObject({
      response: { status: 404, data: { error_msg: 'Workspace 99999 not found.' } },
    });
  });
});
