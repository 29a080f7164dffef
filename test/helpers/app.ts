import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp, type BuildAppOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { createContainer, type Container } from '../../src/container.js';
import { migrateToLatest, type DbHandle, type DialectName } from '../../src/db/index.js';
import { ManualClock } from '../../src/shared/clock.js';
import { usePasswordHashCost } from '../../src/shared/crypto.js';
import { createTestDatabase } from './db.js';

export interface TestApp {
  app: FastifyInstance;
  container: Container;
  config: Config;
  clock: ManualClock;
  dialect: DialectName;
  /** `inject` with an optional `token` sent as `Authorization: Token <token>`. */
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

export const TEST_PUBLIC_URL = 'http://basegate.test';

export interface TestAppOptions {
  /** An existing database (a restart, or a second instance); default: a fresh one, closed with the app. */
  database?: DbHandle;
  clock?: ManualClock;
  /** Told of every route as the app adds it. */
  onRoute?: BuildAppOptions['onRoute'];
}

/** A fully wired app on a fresh database with a manual clock; `env` overrides configuration. */
export async function createTestApp(dialect: DialectName, env: Record<string, string> = {}, options: TestAppOptions = {}): Promise<TestApp> {
  // New passwords at scrypt's N=1024, not 16384: the suite signs up thousands (src/shared/crypto.test.ts covers the real cost).
  usePasswordHashCost(1024);
  const config = loadConfig(
    {
      SECRET_KEY: 'test-secret-key-test-secret-key-0123456789',
      DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-test-')),
      PUBLIC_URL: TEST_PUBLIC_URL,
      LOG_LEVEL: 'silent',
      ...env,
    },
    { persistSecret: false },
  );
  const database = options.database ?? (await createTestDatabase(dialect, { migrated: true }));
  const clock = options.clock ?? new ManualClock();
  const container = createContainer(config, { clock, database });
  await migrateToLatest(container.db);
  // The app logs nothing here: a 500 (a bug, whatever the load) prints its error, so a failed run says what threw.
  const app = await buildApp(container, { logger: false, onServerError: (error) => console.error('test app answered 500:', error), ...(options.onRoute ? { onRoute: options.onRoute } : {}) });
  await app.ready();
  return {
    app,
    container,
    config,
    clock,
    dialect,
    request({ token, headers, ...rest }) {
      return app.inject({ ...rest, headers: { ...(token ? { authorization: `Token ${token}` } : {}), ...headers } });
    },
    async close() {
      await app.close();
      await container.close();
    },
  };
}
