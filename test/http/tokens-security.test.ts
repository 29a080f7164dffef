import { createHash } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Every cell of every table, as text: what an attacker with a copy of the database would see. */
async function dumpDatabase(t: TestApp): Promise<string> {
  const db = t.container.db;
  const tables =
    t.dialect === 'sqlite'
      ? (await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`.execute(db)).rows.map((r) => r.name)
      : (await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`.execute(db)).rows.map(
          (r) => r.name,
        );
  expect(tables).toContain('api_tokens');
  const parts: string[] = [];
  for (const table of tables) {
    const rows = (await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(db)).rows;
    parts.push(JSON.stringify(rows));
  }
  return parts.join('\n');
}

describe.each(DIALECTS)('API-Token secrecy (%s)', (dialect) => {
  let t: TestApp;
  /** A second app over the same container, logging everything (trace) into `lines`. */
  let logged: FastifyInstance;
  const lines: string[] = [];
  let owner: TestUser;
  let base: TestBase;
  let plaintext: string;

  const call = (options: InjectOptions & { token?: string }) => {
    const { token, headers, ...rest } = options;
    return logged.inject({ ...rest, headers: { ...(token ? { authorization: `Token ${token}` } : {}), ...headers } });
  };

  beforeAll(async () => {
    t = await createTestApp(dialect, { LOG_LEVEL: 'trace' });
    logged = await buildApp(t.container, { logStream: { write: (line) => void lines.push(line) } });
    await logged.ready();
    owner = await createUser(t);
    base = await createBase(t, owner);
    const created = await call({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'secret app', permission: 'rw' } });
    expect(created.statusCode).toBe(201);
    plaintext = created.json().api_token;
  });
  afterAll(async () => {
    await logged.close();
    await t.close();
  });

  it('stores only the SHA-256 of the token, nowhere the token itself', async () => {
    const row = await t.container.db.selectFrom('api_tokens').selectAll().where('app_name', '=', 'secret app').executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(sha256(plaintext));
    expect(row.token_hint).toBe(plaintext.slice(-4));
    const dump = await dumpDatabase(t);
    expect(dump).toContain(sha256(plaintext));
    expect(dump).not.toContain(plaintext);
    expect(dump).not.toContain(plaintext.slice(0, 20));
  });

  it('never shows the token again after creation', async () => {
    const list = await call({ method: 'GET', url: basePath(base, 'api-tokens/'), token: owner.token });
    const put = await call({ method: 'PUT', url: basePath(base, 'api-tokens/secret%20app/'), token: owner.token, payload: { permission: 'r' } });
    const dupe = await call({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'secret app', permission: 'r' } });
    for (const res of [list, put, dupe]) {
      expect(res.body).not.toContain(plaintext);
      expect(res.body).not.toContain(plaintext.slice(0, 8));
    }
    expect(list.json().api_tokens[0].api_token).toBe(`${'*'.repeat(36)}${plaintext.slice(-4)}`);
  });

  it('never writes a token, a temporary token, a Base-Token or a link secret to the log', async () => {
    const exchange = await call({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Bearer ${plaintext}` } });
    expect(exchange.statusCode).toBe(200);
    const baseTokenText = exchange.json().access_token;
    const temp = (await call({ method: 'GET', url: basePath(base, 'temp-api-token/'), token: owner.token })).json().api_token;
    await call({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${temp}` } });
    await call({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/`, headers: { authorization: `Token ${baseTokenText}` } });
    // Refused credentials are not logged either.
    await call({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${plaintext.replace(/.$/, 'x')}` } });
    const link = await call({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload: { password: 'link password 123' } });
    const linkToken = link.json().token;
    await call({ method: 'GET', url: `/api/v2.1/external-link-tokens/${linkToken}/access-token/?password=link%20password%20123` });
    await call({ method: 'GET', url: `/api/v2.1/external-link-tokens/${linkToken}/access-token/`, headers: { 'x-link-password': 'link password 123' } });

    const text = lines.join('');
    expect(lines.length).toBeGreaterThan(10);
    expect(text).toContain('app-access-token'); // the requests were logged, just not their secrets
    for (const secret of [plaintext, plaintext.replace(/.$/, 'x'), temp, baseTokenText, linkToken, 'link password 123', 'link%20password%20123', owner.token]) {
      expect(text, secret).not.toContain(secret);
    }
  });
});
