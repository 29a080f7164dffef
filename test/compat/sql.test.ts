/**
 * The official clients' SQL calls against a real listening server: `seatable-api`'s `base.query()`
 * (which maps column keys and option ids back to names through `metadata`) and the MCP server's
 * `query_sql` tool with `parameters`, driven over the MCP protocol.
 */
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { seedSecretData, seedSqlData } from '../http/sql-fixture.js';

const require = createRequire(import.meta.url);

interface SeaTableBase {
  auth(): Promise<void>;
  query(sql: string): Promise<Array<Record<string, unknown>>>;
}
const { Base } = require('seatable-api') as { Base: new (config: { server: string; APIToken: string }) => SeaTableBase };

interface McpServer {
  connect(transport: unknown): Promise<void>;
  close(): Promise<void>;
}

describe.each(DIALECTS)('SQL clients against a listening server (%s)', (dialect) => {
  let t: TestApp;
  let server: string;
  let owner: TestUser;
  let base: TestBase;

  const apiToken = async (appName: string, permission: 'r' | 'rw') => {
    const res = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: appName, permission } });
    if (res.statusCode !== 201) throw new Error(`api token failed: ${res.body}`);
    return res.json<{ api_token: string }>().api_token;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    server = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    owner = await createUser(t);
    base = await createBase(t, owner, 'SQL client base');
    await seedSqlData(t.container.db, base.id);
    await seedSecretData(t.container.db, (await createBase(t, owner, 'Secret base')).id);
  });
  afterAll(() => t.close());

  describe('seatable-api', () => {
    let client: SeaTableBase;
    beforeAll(async () => {
      client = new Base({ server, APIToken: await apiToken('sql client', 'rw') });
      await client.auth();
    });

    it('query() returns rows by column name, with select options and dates mapped back', async () => {
      const rows = await client.query("SELECT Name, City, Tags, Birthday FROM Contacts WHERE Age > 26 ORDER BY Age");
      expect(rows).toEqual([
        { _id: 'row-diana-000000000004', Name: 'Diana', City: 'Hamburg', Birthday: null },
        { _id: 'row-alice-000000000001', Name: 'Alice', City: 'Berlin', Tags: ['red', 'green'], Birthday: '1994-03-01' },
        { _id: 'row-charlie-0000000003', Name: 'Charlie', City: 'Berlin', Tags: ['green'], Birthday: '1989-07-14' },
      ]);
    });

    it('query() keeps aggregates, keyed by their expression text', async () => {
      const rows = await client.query('SELECT City, COUNT(*), AVG(Age) FROM Contacts WHERE City IS NOT NULL GROUP BY City');
      expect(rows).toEqual([
        { _id: undefined, City: 'Munich', 'COUNT(*)': 2, 'AVG(Age)': 11.25 },
        { _id: undefined, City: 'Berlin', 'COUNT(*)': 2, 'AVG(Age)': 32.5 },
        { _id: undefined, City: 'Hamburg', 'COUNT(*)': 1, 'AVG(Age)': 28 },
      ]);
    });

    it('query() reads an implicit join, each result key mapped to its column name', async () => {
      expect(await client.query("INSERT INTO `Other Table` (Title) VALUES ('Alice')")).toEqual([]);
      const rows = await client.query('SELECT Contacts.Name, Contacts.City, `Other Table`.Title FROM Contacts, `Other Table` WHERE Contacts.Name = `Other Table`.Title');
      expect(rows).toEqual([{ _id: undefined, Name: 'Alice', City: 'Berlin', Title: 'Alice' }]);
      await client.query("DELETE FROM `Other Table` WHERE Title = 'Alice'");
    });

    it('query() writes with UPDATE and surfaces a 400 for a bad statement', async () => {
      expect(await client.query("UPDATE Contacts SET Rating = 3 WHERE Name = 'Bob'")).toEqual([]);
      expect(await client.query("SELECT Rating FROM Contacts WHERE Name = 'Bob'")).toEqual([{ _id: 'row-bob-00000000000002', Rating: 3 }]);
      await expect(client.query('SELECT * FROM nonexistent_table')).rejects.toMatchObject({
        response: { status: 400, data: { success: false, error_message: "Table 'nonexistent_table' not found." } },
      });
    });
  });

  describe('@seatable/mcp-seatable', () => {
    let mcp: Client;
    let mcpServer: McpServer;

    beforeAll(async () => {
      process.env.LOG_LEVEL ??= 'warn'; // the client logs at info to stderr otherwise
      const { createMcpServer } = (await import('@seatable/mcp-seatable')) as unknown as {
        createMcpServer(config: { serverUrl: string; apiToken: string }): Promise<McpServer>;
      };
      mcpServer = await createMcpServer({ serverUrl: server, apiToken: await apiToken('mcp sql', 'rw') });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await mcpServer.connect(serverSide);
      mcp = new Client({ name: 'basegate-compat', version: '1.0.0' });
      await mcp.connect(clientSide);
    });
    afterAll(async () => {
      await mcp.close();
      await mcpServer.close();
    });

    const querySql = async (sql: string, parameters?: unknown[]) => {
      const result = (await mcp.callTool({ name: 'query_sql', arguments: { sql, ...(parameters ? { parameters } : {}) } })) as {
        isError?: boolean;
        content: Array<{ type: string; text: string }>;
      };
      return { isError: result.isError === true, text: result.content[0]!.text };
    };

    it('query_sql binds parameters and answers rows by column name', async () => {
      const { isError, text } = await querySql('SELECT Name, Age, City FROM Contacts WHERE City = ? AND Age > ? ORDER BY Age DESC', ['Berlin', 20]);
      expect(isError).toBe(false);
      const body = JSON.parse(text) as { metadata: Array<Record<string, unknown>>; results: Array<Record<string, unknown>> };
      expect(body.results).toEqual([
        { _id: 'row-charlie-0000000003', Name: 'Charlie', Age: 35, City: 'Berlin' },
        { _id: 'row-alice-000000000001', Name: 'Alice', Age: 30, City: 'Berlin' },
      ]);
      expect(body.metadata).toEqual([
        { name: 'Name', type: 'text' },
        { name: 'Age', type: 'number', format: 'number' },
        { name: 'City', type: 'single-select', options: ['Munich', 'Berlin', 'Hamburg'] },
      ]);
    });

    it('query_sql writes with parameters, and a hostile parameter stays a value', async () => {
      const update = await querySql('UPDATE Contacts SET Notes = ? WHERE Name = ?', ['set by MCP', 'Diana']);
      expect(update.isError).toBe(false);
      const hostile = await querySql('DELETE FROM Contacts WHERE Name = ?', ["' OR '1'='1"]);
      expect(hostile.isError).toBe(false);
      const check = JSON.parse((await querySql('SELECT Name, Notes FROM Contacts WHERE Notes = ?', ['set by MCP'])).text) as { results: unknown[] };
      expect(check.results).toEqual([{ _id: 'row-diana-000000000004', Name: 'Diana', Notes: 'set by MCP' }]);
      const count = JSON.parse((await querySql('SELECT COUNT(*) FROM Contacts')).text) as { results: unknown[] };
      expect(count.results).toEqual([{ 'COUNT(*)': 6 }]);
    });

    it('query_sql reports a refused statement as a tool error', async () => {
      const { isError, text } = await querySql('SELECT * FROM Contacts UNION SELECT * FROM Contacts');
      expect(isError).toBe(true);
      expect(text).toContain('ERR_BAD_REQUEST: UNION, INTERSECT and EXCEPT are not supported.');
    });
  });
});
