import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, appendRow, baseWithWebhook, killHard, serverEnv, startServerProcess } from './processes.js';
import { holdSqliteWriteLock } from './support.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

/** The time a request took, in ms, and its status. */
async function timed(url: string, init?: RequestInit): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now();
  const res = await fetch(url, init);
  const body = await res.text();
  return { ms: performance.now() - started, status: res.status, body };
}

/**
 * Issue 25.5: while another process holds the SQLite write lock, waiting for it never blocks the
 * event loop (SQLite's own busy timeout sleeps inside the synchronous call): liveness and reads keep
 * answering, a write gets 503 after DATABASE_CONNECT_TIMEOUT_MS, and writes succeed once the lock is free.
 * The lock is held 4 s here (the issue held it 20 s; the behaviour is the same).
 */
describe('a foreign SQLite write lock', () => {
  it('keeps /health/live/ and reads answering, writes get 503, and writes resume after it', async () => {
    const { env, dataDir } = await serverEnv('sqlite', { DATABASE_CONNECT_TIMEOUT_MS: '1500' });
    const server = await startServerProcess(env);
    cleanup.push(() => killHard(server));
    const base = await baseWithWebhook(server, ADMIN, null);
    await appendRow(server, base, 'before the lock');
    const auth = { authorization: `Token ${base.baseToken}`, 'content-type': 'application/json' };
    const rowsUrl = `${server.url}/api-gateway/api/v2/dtables/${base.uuid}/rows/`;

    const holder = await holdSqliteWriteLock(path.join(dataDir, 'basegate.sqlite3'), 4_000);
    const lockedAt = Date.now();
    // Several writes wait for the lock at once (as the background jobs and other clients would).
    const writes = Array.from({ length: 3 }, (_, i) =>
      timed(rowsUrl, { method: 'POST', headers: auth, body: JSON.stringify({ table_name: 'Table1', rows: [{ Name: `locked ${i}` }] }) }),
    );
    const health: number[] = [];
    const reads: number[] = [];
    while (Date.now() - lockedAt < 3_000) {
      const live = await timed(`${server.url}/health/live/`);
      expect(live.status).toBe(200);
      health.push(live.ms);
      const read = await timed(`${rowsUrl}?table_name=Table1`, { headers: auth });
      expect(read.status).toBe(200);
      reads.push(read.ms);
      await new Promise((r) => setTimeout(r, 50));
    }
    const refused = await Promise.all(writes);
    await holder.done;
    console.info(`during the lock: /health/live/ max ${Math.round(Math.max(...health))} ms over ${health.length}, reads max ${Math.round(Math.max(...reads))} ms; writes answered after ${refused.map((w) => Math.round(w.ms)).join(', ')} ms`);
    // The old synchronous wait froze the whole process for the busy timeout (1.5 s) per waiting write.
    expect(Math.max(...health)).toBeLessThan(1_000);
    expect(Math.max(...reads)).toBeLessThan(1_000);
    for (const write of refused) {
      expect(write.status).toBe(503);
      expect(JSON.parse(write.body)).toEqual({ error_msg: 'The database is busy. Please retry later.' });
    }
    expect(server.output()).toMatch(/SQLITE_BUSY/);
    await appendRow(server, base, 'after the lock');
    const listed = (await (await fetch(`${rowsUrl}?table_name=Table1`, { headers: auth })).json()) as { rows: Array<Record<string, unknown>> };
    // The refused writes left nothing (a new base also has empty rows of its own; '0000' is the Name column's key).
    expect(listed.rows.map((r) => r['0000']).filter(Boolean)).toEqual(['before the lock', 'after the lock']);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }, 60_000);
});
