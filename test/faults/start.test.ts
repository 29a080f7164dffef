import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { StallingProxy } from './support.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const TSX = path.join(ROOT, 'node_modules/.bin/tsx');

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

describe.each(['postgres' as const].filter(() => !!process.env.TEST_DATABASE_URL))('start while the database is down (%s)', () => {
  it('retries with backoff, says so in the log, and serves once the database is reachable', async () => {
    const schema = `t_${randomBytes(6).toString('hex')}`;
    await admin(`CREATE SCHEMA ${schema}`);
    const target = new URL(process.env.TEST_DATABASE_URL!);
    const port = await freePort(); // nothing listens here yet: connections are refused
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.host = `127.0.0.1:${port}`;
    url.searchParams.set('options', `-c search_path=${schema}`);
    const { REDIS_URL: _r, SECRET_KEY: _s, ...rest } = process.env;
    const child = spawn(TSX, ['src/cli.ts', 'serve'], {
      cwd: ROOT,
      env: { ...rest, DATABASE_URL: url.toString(), DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-start-')), PORT: '0', LOG_LEVEL: 'info', ADMIN_PASSWORD: 'admin-password-1' },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const until = async (pattern: RegExp, what: string) => {
      for (let i = 0; i < 6000 && !pattern.test(output); i++) await new Promise((r) => setTimeout(r, 10));
      if (!pattern.test(output)) throw new Error(`no ${what}:\n${output}`);
    };
    const proxy = new StallingProxy({ host: target.hostname, port: Number(target.port || 5432) });
    try {
      await until(/database unreachable at start; retrying[^\n]*"attempt":2|"attempt":2[^\n]*database unreachable at start/, 'second retry');
      expect(output).toMatch(/ECONNREFUSED/);
      expect(output).not.toMatch(/Server listening/);
      await proxy.listen(port); // the database comes up
      await until(/Server listening at http:\/\/127\.0\.0\.1:\d+/, 'listening line');
      expect(output).toMatch(/database is reachable/);
      const listening = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
      expect((await fetch(`${listening}/health/ready/`)).status).toBe(200);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await proxy.close();
      await admin(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  }, 120_000);
});
