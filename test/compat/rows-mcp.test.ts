import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { listRows as listViaApi, type Gateway } from '../http/rows.fixtures.js';

interface ToolResult {
  content: Array<{ type: string; text: string }>;
  isError?: boolean;
}
interface McpServer {
  handleCallTool(request: { params: { name: string; arguments: Record<string, unknown> } }): Promise<ToolResult>;
}

describe.each(DIALECTS)('@seatable/mcp-seatable tools against a listening server (%s)', (dialect) => {
  let t: TestApp;
  let base: TestBase;
  let mcp: McpServer;
  let g: Pick<Gateway, 'call'>;
  let owner: TestUser;

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await mcp.handleCallTool({ params: { name, arguments: args } });
    expect(result.isError, result.content[0]?.text).toBeFalsy();
    return JSON.parse(result.content[0]!.text) as Record<string, unknown>;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    owner = await createUser(t);
    base = await createBase(t, owner, 'MCP base');
    const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'mcp-agent', permission: 'rw' } });
    const apiToken = created.json<{ api_token: string }>().api_token;
    const { createMcpServer } = (await import('@seatable/mcp-seatable')) as unknown as {
      createMcpServer(config: { serverUrl: string; apiToken: string }): Promise<McpServer>;
    };
    mcp = await createMcpServer({ serverUrl: server, apiToken });
    const access = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: apiToken });
    const token = access.json<{ access_token: string }>().access_token;
    g = { call: (method, suffix, payload) => t.request({ method, url: `/api-gateway/api/v2/dtables/${base.uuid}/${suffix}`, token, ...(payload ? { payload: payload as object } : {}) }) };
    await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Score', column_type: 'number' });
  });
  afterAll(() => t.close());

  it('add_row appends one row and returns it', async () => {
    const row = await call('add_row', { table: 'Table1', row: { Name: 'alpha', Score: 1 } });
    expect(row).toMatchObject({ _id: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/), _creator: 'mcp-agent' });
    await call('add_row', { table: 'Table1', row: { Name: 'beta', Score: 2 } });
    await call('add_row', { table: 'Table1', row: { Name: 'gamma', Score: 3 } });
  });

  it('list_rows pages with start/limit and reads names', async () => {
    const page1 = await call('list_rows', { table: 'Table1', page: 1, page_size: 2 });
    expect((page1.rows as Array<Record<string, unknown>>).map((r) => r.Name)).toEqual(['alpha', 'beta']);
    expect(page1.has_more).toBe(true);
    const page2 = await call('list_rows', { table: 'Table1', page: 2, page_size: 2 });
    expect((page2.rows as Array<Record<string, unknown>>).map((r) => [r.Name, r.Score])).toEqual([['gamma', 3]]);
    expect(page2.has_more).toBe(false);
  });

  it('update_rows changes several rows in one call', async () => {
    const rows = (await call('list_rows', { table: 'Table1' })).rows as Array<{ _id: string; Name: string }>;
    const result = await call('update_rows', {
      table: 'Table1',
      updates: rows.map((r) => ({ row_id: r._id, values: { Score: r.Name.length } })),
    });
    expect(result).toEqual({ success: true, updated_count: 3 });
    const after = ((await call('list_rows', { table: 'Table1' })).rows as Array<Record<string, unknown>>).map((r) => [r.Name, r.Score, r._last_modifier]);
    expect(after).toEqual([
      ['alpha', 5, 'mcp-agent'],
      ['beta', 4, 'mcp-agent'],
      ['gamma', 5, 'mcp-agent'],
    ]);
  });

  it('delete_rows removes the rows named', async () => {
    const rows = (await call('list_rows', { table: 'Table1' })).rows as Array<{ _id: string; Name: string }>;
    const result = await call('delete_rows', { table: 'Table1', row_ids: rows.slice(0, 2).map((r) => r._id) });
    expect(result).toEqual({ success: true, deleted_count: 2 });
    const left = await listViaApi({ call: g.call } as Gateway, 'table_name=Table1&convert_keys=true');
    expect(left.map((r) => r.Name)).toEqual(['gamma']);
  });

  it('list_collaborators reads related-users with its Base-Token (Bearer, /api/v2.1/dtables/{uuid}/related-users/)', async () => {
    const result = await mcp.handleCallTool({ params: { name: 'list_collaborators', arguments: {} } });
    expect(result.isError, result.content[0]?.text).toBeFalsy();
    const users = JSON.parse(result.content[0]!.text) as Array<{ email: string }>;
    expect(users.map((u) => u.email)).toEqual([owner.virtualId]);
  });
});
