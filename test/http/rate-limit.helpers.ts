import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import type { Config } from '../../src/config/index.js';
import { createContainer, type Container } from '../../src/container.js';
import type { Redis } from '../../src/platform/redis.js';
import { ManualClock } from '../../src/shared/clock.js';
import { afterAll, beforeAll } from 'vitest';
import type { DialectName } from '../../src/db/index.js';
import { createTestApp, type TestApp } from '../helpers/index.js';

export interface Instance {
  app: FastifyInstance;
  container: Container;
  clock: ManualClock;
  close(): Promise<void>;
}

/** Another API instance on the same database as `t` (its own counters, caches, clock and Redis connection). */
export async function secondInstance(t: TestApp, config: Config = t.config): Promise<Instance> {
  const clock = new ManualClock(t.clock.now());
  const container = createContainer(config, { clock, database: { db: t.container.db, dialect: t.dialect, close: async () => {} } });
  const app = await buildApp(container, { logger: false });
  await app.ready();
  return {
    app,
    container,
    clock,
    async close() {
      await app.close();
      await container.close();
    },
  };
}

/**
 * Two instances on one database sharing Redis (TEST_REDIS_URL, else a redis-server of their own), both
 * listening for revocations: made before the enclosing describe block's tests and closed after them.
 */
export function twoInstancesOverRedis(dialect: DialectName): { t: TestApp; other: Instance } {
  const pair = {} as { t: TestApp; other: Instance };
  let own: RedisProcess | null = null;
  beforeAll(async () => {
    let url = process.env.TEST_REDIS_URL;
    if (!url) {
      own = await RedisProcess.start();
      url = own.url;
    }
    pair.t = await createTestApp(dialect, { REDIS_URL: url });
    pair.other = await secondInstance(pair.t);
    await Promise.all([pair.t.container.tokens.ready(), pair.other.container.tokens.ready()]);
  });
  afterAll(async () => {
    try {
      await pair.other?.close();
      await pair.t?.close();
    } finally {
      await own?.kill();
    }
  });
  return pair;
}

/** A redis-server of the test's own on a free port, which the test may kill and restart. */
export class RedisProcess {
  private child: ChildProcess | null = null;

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisProcess> {
    const server = new RedisProcess(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** (Re)start on the same port; resolves once it accepts connections. */
  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    // Do not outlive the test process, even when it ends without running afterAll.
    const reap = () => child.kill('SIGKILL');
    process.once('exit', reap);
    child.once('exit', () => process.removeListener('exit', reap));
    await new Promise<void>((resolve, reject) => {
      let output = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code}: ${output}`));
      });
    });
  }

  /** Kill it outright, as a crash would. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = null;
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Poll (real time) until the connection reaches `status`; connection state changes are asynchronous. */
export async function waitForStatus(redis: Redis, wanted: (status: string) => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!wanted(redis.status)) {
    if (Date.now() > deadline) throw new Error(`Redis connection stayed ${redis.status}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
