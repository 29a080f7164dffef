import { execFile } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/index.js';
import { adminQuery } from '../helpers/db.js';
import { ROOT, cliCommand } from '../helpers/cli-process.js';
import { ADMIN, appendRow, baseWithWebhook, killHard, serverEnv, startServerProcess, waitUntil } from './processes.js';

const run = promisify(execFile);

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

/** A webhook receiver that records each delivery's `webhook-id` and row, holding every answer while `hold` is on. */
class Receiver {
  readonly received: Array<{ id: string; row: string }> = [];
  private readonly server: Server;
  private held: ServerResponse[] = [];
  hold = true;

  constructor() {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { row_name?: string } };
        this.received.push({ id: String(req.headers['webhook-id']), row: body.data.row_name ?? '' });
        if (this.hold) this.held.push(res);
        else res.writeHead(200).end('ok');
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  release(): void {
    this.hold = false;
    for (const res of this.held.splice(0)) res.writeHead(200).end('ok');
  }

  rows(prefix: string): Set<string> {
    return new Set(this.received.filter((d) => d.row.startsWith(prefix)).map((d) => d.row));
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const names = (prefix: string) => Array.from({ length: 8 }, (_, i) => `${prefix}${i}`);

/**
 * Issue 25.6: an instance restored from a backup sends again what the backup had not recorded as
 * delivered — always under the `webhook-id` the receiver saw the first time (derived from webhook,
 * event and write), so the receiver can drop the repeats; and the changes made after the restore,
 * which take the event ids of changes the restore lost, get ids of their own.
 */
describe.each(DIALECTS)('restore from a backup (%s)', (dialect) => {
  it('re-sends only under the webhook-ids the receiver already saw', async () => {
    const receiver = new Receiver();
    const hookUrl = await receiver.start();
    cleanup.push(() => receiver.close());
    const { env, dataDir, schema, drop } = await serverEnv(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    cleanup.push(drop);
    // PostgreSQL: the first instance only serves the API, so the backup holds changes no consumer has
    // turned into deliveries yet (as a backup taken at any moment may); a full instance does after it.
    const first = await startServerProcess(env, dialect === 'postgres' ? ['--role', 'api'] : []);
    cleanup.push(() => killHard(first));
    const base = await baseWithWebhook(first, ADMIN, hookUrl);

    // Changes the backup holds, none of them acknowledged by the receiver yet.
    for (const name of names('a')) await appendRow(first, base, name);
    if (dialect === 'sqlite') await waitUntil(() => receiver.received.length > 0, 'a delivery in flight');
    const backup = path.join(dataDir, 'backup.sqlite3');
    if (dialect === 'sqlite') {
      const done = await run(...cliCommand('backup', backup), { cwd: ROOT, env });
      expect(done.stdout).toMatch(/Backed up to/);
    } else {
      await run('pg_dump', ['--format=custom', `--schema=${schema}`, `--file=${backup}`, process.env.TEST_DATABASE_URL!]);
    }
    receiver.release();
    const worker = dialect === 'postgres' ? await startServerProcess(env) : first;
    cleanup.push(() => killHard(worker));
    // Changes after the backup: delivered, then lost by the restore.
    for (const name of names('b')) await appendRow(first, base, name);
    await waitUntil(() => receiver.rows('a').size === 8 && receiver.rows('b').size === 8, 'every change delivered');
    for (const server of new Set([first, worker])) {
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
    }

    if (dialect === 'sqlite') {
      const file = path.join(dataDir, 'basegate.sqlite3');
      for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
      copyFileSync(backup, file);
    } else {
      await adminQuery(`DROP SCHEMA ${schema} CASCADE`);
      await run('pg_restore', [`--dbname=${process.env.TEST_DATABASE_URL!}`, backup]);
    }
    // Counted before the restored process starts: it may re-send before the test sees it listening
    // (on a loaded machine the re-sends then fell before the count, and were never seen again).
    const sentBefore = receiver.received.length;
    const restored = await startServerProcess(env);
    cleanup.push(() => killHard(restored));
    for (const name of names('c')) await appendRow(restored, base, name);
    // What the backup had not seen acknowledged goes out again; the new changes go out once.
    await waitUntil(() => receiver.rows('c').size === 8, 'the changes after the restore');
    await waitUntil(() => receiver.received.slice(sentBefore).filter((d) => d.row.startsWith('a')).length >= 8, 'the re-sends', 30_000);

    const idsOf = new Map<string, Set<string>>();
    for (const d of receiver.received) idsOf.set(d.row, (idsOf.get(d.row) ?? new Set()).add(d.id));
    // One id per change, however often it was sent.
    expect([...idsOf].filter(([, ids]) => ids.size > 1)).toEqual([]);
    const ids = (prefix: string) => names(prefix).map((n) => [...idsOf.get(n)!][0]!);
    expect(ids('c').filter((id) => ids('b').includes(id))).toEqual([]);
    restored.child.kill('SIGTERM');
    expect(await restored.exited).toBe(0);
  }, 180_000);
});

describe('basegate backup', () => {
  const backup = (env: NodeJS.ProcessEnv, file: string) =>
    run(...cliCommand('backup', file), { cwd: ROOT, env }).then(
      (done) => ({ code: 0, out: done.stdout + done.stderr }),
      (failed: { code: number; stdout: string; stderr: string }) => ({ code: failed.code, out: failed.stdout + failed.stderr }),
    );

  it('never overwrites a file, and sends PostgreSQL to pg_dump', async () => {
    const { env, dataDir } = await serverEnv('sqlite');
    const first = await startServerProcess(env); // creates and migrates the database
    cleanup.push(() => killHard(first));
    const target = path.join(dataDir, 'copy.sqlite3');
    expect(await backup(env, target)).toMatchObject({ code: 0, out: expect.stringMatching(/Backed up to .*copy\.sqlite3 \(\d+ bytes\)/) });
    expect(await backup(env, target)).toEqual({ code: 1, out: expect.stringMatching(/Backup failed: .*exists; name a new file/) });
    const pgEnv = { ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' };
    expect(await backup(pgEnv, path.join(dataDir, 'pg.dump'))).toEqual({ code: 2, out: expect.stringMatching(/for PostgreSQL use pg_dump/) });
  }, 60_000);
});
