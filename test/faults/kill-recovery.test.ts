import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/index.js';
import { adminQuery } from '../helpers/db.js';
import { HoldingReceiver, appendRow, baseWithWebhook, killHard, startServerProcess, waitUntil, type ServerProcess } from './processes.js';

const ADMIN = { email: 'admin@example.com', password: 'admin-password-1' };
const STALE_MS = 3_000;

/**
 * Issue 16: a server process killed with SIGKILL while a webhook delivery is in flight (the receiver
 * holds it open). The queue must move again within seconds — after a restart on the same data and,
 * on PostgreSQL, by a second instance taking over the dead one's leases — not after the lease's
 * timeout + 60 s. The attempt timeout is set far beyond the test so only crash recovery can free it.
 */
const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

async function workersBeating(schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    const result = await client.query(`SELECT count(*) AS n FROM ${schema}.delivery_workers WHERE heartbeat_at > $1`, [Date.now() - STALE_MS]);
    return Number(result.rows[0].n);
  } finally {
    await client.end();
  }
}

/** A server process with a base whose webhook's first delivery is held in flight by the receiver. */
async function setup(dialect: 'sqlite' | 'postgres') {
  const { DATABASE_URL: _d, REDIS_URL: _r, ...rest } = process.env;
  const env: NodeJS.ProcessEnv = {
    ...rest,
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-kill-')),
    PORT: '0',
    LOG_LEVEL: 'info',
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    SECRET_KEY: 'kill-test-secret-key-0123456789abcdef0123456789',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_TIMEOUT_MS: '300000',
    WEBHOOK_WORKER_STALE_MS: String(STALE_MS),
  };
  const schema = `t_${randomBytes(6).toString('hex')}`;
  if (dialect === 'postgres') {
    await adminQuery(`CREATE SCHEMA ${schema}`);
    cleanup.push(() => adminQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
  }
  const receiver = new HoldingReceiver();
  const hookUrl = await receiver.start();
  cleanup.push(() => receiver.close());
  const start = async () => {
    const server = await startServerProcess(env);
    cleanup.push(() => killHard(server));
    return server;
  };
  const first = await start();
  const base = await baseWithWebhook(first, ADMIN, hookUrl);
  await appendRow(first, base, 'in flight');
  await waitUntil(() => receiver.received.length === 1, 'the first delivery to reach the receiver');
  return { receiver, first, base, start, schema };
}

/** The held delivery arrives again (same webhook-id), then a new change flows too. */
async function expectQueueMoving(
  dialect: string,
  receiver: HoldingReceiver,
  server: ServerProcess,
  base: { uuid: string; baseToken: string },
  killedAt: number,
  label: string,
) {
  const held = receiver.received[0]!;
  await waitUntil(() => receiver.received.length >= 2, 'the delivery that was in flight to be sent again', 90_000);
  const again = receiver.received[1]!;
  expect(again).toMatchObject({ webhookId: held.webhookId, rowName: 'in flight' });
  console.info(`[${dialect}] ${label}: the in-flight delivery arrived again ${again.at - killedAt} ms after the kill`);
  await appendRow(server, base, 'after the kill');
  await waitUntil(() => receiver.received.some((d) => d.rowName === 'after the kill'), 'a new change to be delivered');
  expect(receiver.received.filter((d) => d.webhookId === held.webhookId)).toHaveLength(2);
}

/**
 * Issue 16: a server process killed with SIGKILL while a webhook delivery is in flight (the receiver
 * holds it open). The queue must move again within seconds — after a restart on the same data and,
 * on PostgreSQL, by a second instance taking over the dead one's leases — not after the lease's
 * timeout + 60 s. The attempt timeout is set far beyond the test, so only crash recovery frees it.
 */
describe.each(DIALECTS)('kill -9 with a webhook delivery in flight (%s)', (dialect) => {
  it('a restarted process sends the delivery again and the queue moves on', async () => {
    const { receiver, first, base, start } = await setup(dialect);
    await killHard(first);
    const killedAt = Date.now();
    const restarted = await start();
    console.info(`[${dialect}] restart: listening ${Date.now() - killedAt} ms after the kill`);
    await expectQueueMoving(dialect, receiver, restarted, base, killedAt, 'restart');
    restarted.child.kill('SIGTERM');
    expect(await restarted.exited).toBe(0);
  }, 240_000);
});

describe.each(DIALECTS.filter((d) => d === 'postgres'))('kill -9 of one of two instances (%s)', (dialect) => {
  it('the other instance keeps off the live instance’s lease, then takes it over once that one is killed', async () => {
    const { receiver, first, base, start, schema } = await setup(dialect);
    const second = await start();
    await waitUntil(async () => (await workersBeating(schema)) >= 2, 'both workers to beat');
    // Longer than the stale time: the lease of a live (beating) worker holds, nothing is sent twice.
    await new Promise((r) => setTimeout(r, STALE_MS + 2_000));
    expect(receiver.received).toHaveLength(1);
    await killHard(first);
    const killedAt = Date.now();
    await expectQueueMoving(dialect, receiver, second, base, killedAt, 'takeover by the second instance');
  }, 240_000);
});
