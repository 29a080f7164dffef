/** Servers for benchmarks: a bare Fastify route, and basegate seeded with a user, a base and tokens. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createContainer, type Container } from '../../src/container.js';
import { migrateToLatest } from '../../src/db/index.js';

export interface Running {
  origin: string;
  close(): Promise<void>;
}

/** The yardstick: Fastify with one route answering a constant, no logger, no plugins. */
export async function startBare(): Promise<Running & { url: string }> {
  const app = Fastify();
  app.get('/bare', async () => ({ hello: 'world' }));
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return { origin, url: `${origin}/bare`, close: () => app.close() };
}

export interface Seeded {
  accountToken: string;
  base: { uuid: string; workspace_id: number; name: string };
  /** An `rw` API-Token of the base. */
  apiToken: string;
  /** A Base-Token issued from the API-Token. */
  baseToken: string;
}

export interface RunningBasegate extends Running {
  app: FastifyInstance;
  container: Container;
  seeded: Seeded;
}

/**
 * basegate as `npm start` runs it (SQLite file under a fresh DATA_DIR, or BENCH_DATABASE_URL), with
 * `env` on top and `options.routes` added. Logging is off, as for the bare route, so both measure
 * request handling only.
 */
export async function startBasegate(
  env: Record<string, string> = {},
  options: { routes?: (app: FastifyInstance) => void } = {},
): Promise<RunningBasegate> {
  const config = loadConfig(
    {
      SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789',
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-bench-')),
      ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {}),
      ...env,
    },
    { persistSecret: false },
  );
  const container = createContainer(config);
  await migrateToLatest(container.db);
  const app = await buildApp(container, { logger: false });
  options.routes?.(app); // extra routes for a benchmark, registered before the app is ready
  const seeded = await seed(app, container);
  const origin = await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    origin,
    app,
    container,
    seeded,
    async close() {
      await app.close();
      await container.close();
    },
  };
}

async function seed(app: FastifyInstance, container: Container): Promise<Seeded> {
  const email = `bench-${Date.now()}@example.com`;
  await container.accounts.createUser({ email, password: 'password-123' });
  const ok = <T>(res: { statusCode: number; body: string; json(): unknown }, what: string): T => {
    if (res.statusCode >= 300) throw new Error(`${what}: ${res.statusCode} ${res.body}`);
    return res.json() as T;
  };
  const { token: accountToken } = ok<{ token: string }>(
    await app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: email, password: 'password-123' } }),
    'login',
  );
  const headers = { authorization: `Token ${accountToken}` };
  const { table: base } = ok<{ table: Seeded['base'] }>(
    await app.inject({ method: 'POST', url: '/api/v2.1/dtables/', headers, payload: { name: 'bench' } }),
    'create base',
  );
  const { api_token: apiToken } = ok<{ api_token: string }>(
    await app.inject({ method: 'POST', url: `/api/v2.1/workspace/${base.workspace_id}/dtable/bench/api-tokens/`, headers, payload: { app_name: 'bench', permission: 'rw' } }),
    'create API-Token',
  );
  const { access_token: baseToken } = ok<{ access_token: string }>(
    await app.inject({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${apiToken}` } }),
    'exchange API-Token',
  );
  return { accountToken, base, apiToken, baseToken };
}

/**
 * A Base-Token from an API-Token of the seeded base scoped in every dimension (table, operations,
 * networks, its own rate budget): what the security benches time against the unscoped token.
 */
export const EVERY_DIMENSION = { tables: ['Table1'], operations: ['read_rows', 'write_rows'], allowed_networks: ['127.0.0.0/8'], rate_limit: 1_000_000 };

/** `scope`: the token's scope fields (default: every dimension); the ablation passes one dimension at a time. */
export async function scopedBaseToken({ app, seeded }: Pick<RunningBasegate, 'app' | 'seeded'>, scope: Record<string, unknown> = EVERY_DIMENSION, name = 'scoped'): Promise<string> {
  const created = await app.inject({
    method: 'POST',
    url: `/api/v2.1/workspace/${seeded.base.workspace_id}/dtable/bench/api-tokens/`,
    headers: { authorization: `Token ${seeded.accountToken}` },
    payload: { app_name: name, permission: 'rw', ...scope },
  });
  if (created.statusCode >= 300) throw new Error(`scoped token: ${created.statusCode} ${created.body}`);
  const exchanged = await app.inject({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${created.json<{ api_token: string }>().api_token}` } });
  if (exchanged.statusCode >= 300) throw new Error(`scoped Base-Token: ${exchanged.statusCode} ${exchanged.body}`);
  return exchanged.json<{ access_token: string }>().access_token;
}

/** A gateway call of the seeded base with its Base-Token, in process; its JSON answer, or an error naming the status. */
export async function gatewayCall(b: RunningBasegate, method: 'GET' | 'POST', suffix: string, payload?: object): Promise<unknown> {
  const res = await b.app.inject({
    method,
    url: `/api-gateway/api/v2/dtables/${b.seeded.base.uuid}/${suffix}`,
    headers: { authorization: `Token ${b.seeded.baseToken}` },
    ...(payload ? { payload } : {}),
  });
  if (res.statusCode !== 200) throw new Error(`${method} ${suffix}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json();
}
