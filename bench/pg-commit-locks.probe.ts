/**
 * Issue 34 item 4: what serializes one base's PostgreSQL append commits, measured with `pgbench`
 * (no basegate code: the database alone). Ten clients each run one statement of the append's shape
 * (a gate, a lock, a one-row INSERT; autocommit, so the lock is held through the commit's WAL flush),
 * beside the plain INSERT in the same round:
 *  - `today`: the revision bump (`UPDATE … SET revision = revision + 1` of the base's metadata row),
 *    the exclusive `EVENTS_COMMIT_LOCK` and a `pg_notify` (the revision trigger of migration 0016);
 *  - `notify`, `commit lock`, `bump`: each of the three alone, in a transaction (so their rates compare
 *    with `plain, transaction`);
 *  - `design`: the append of the design in docs/architecture.md ("Concurrent appends of one base"):
 *    the metadata row `FOR KEY SHARE`, a striped revision counter (one of 16 rows by backend), the
 *    commit lock taken shared;
 *  - `design + notify`: the same with the trigger's `pg_notify` left in the writing transaction.
 * Rounds interleave the targets; each ratio is to the plain insert of its own round.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/pg-commit-locks.probe.ts
 *
 * Knobs: BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10). Works in a schema of its own
 * (`commit_locks_probe`), dropped at the end. Needs `pgbench` and `psql` on the PATH.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { median } from './lib/harness.js';

const url = process.env.BENCH_DATABASE_URL;
if (!url?.startsWith('postgres')) throw new Error('pg-commit-locks.probe needs BENCH_DATABASE_URL (PostgreSQL)');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const run = promisify(execFile);
const S = 'commit_locks_probe';
/** Any key but basegate's own EVENTS_COMMIT_LOCK (4_471_002), so a server on the same database is not disturbed. */
const LOCK = 4_471_999;

const insert = `INSERT INTO ${S}.t (v, created) VALUES ('row', 1)`;
const insertFrom = (from: string) => `INSERT INTO ${S}.t (v, created) SELECT 'row', 1 FROM ${from} RETURNING 1`;
const gateShared = `SELECT version FROM ${S}.meta WHERE id = 1 AND version = 1 FOR KEY SHARE`;
const stripe = `UPDATE ${S}.stripes SET n = n + 1 FROM g WHERE base_id = 1 AND stripe = pg_backend_pid() % 16 RETURNING 1`;
const inTransaction = (...statements: string[]) => ['BEGIN;', ...statements.map((s) => `${s};`), 'COMMIT;'].join('\n');
const targets: Array<{ name: string; script: string }> = [
  { name: 'plain insert', script: `${insert};` },
  {
    name: 'today (bump, commit lock, notify)',
    script: `WITH g AS (UPDATE ${S}.meta SET revision = revision + 1 WHERE id = 1 AND version = 1 RETURNING version), l AS (SELECT pg_advisory_xact_lock(${LOCK}), pg_notify('commit_locks_probe', 'x') FROM g), i AS (${insertFrom('l')}) SELECT count(*) FROM i;`,
  },
  { name: 'design (key share, stripe, shared lock)', script: `WITH g AS (${gateShared}), s AS (${stripe}), l AS (SELECT pg_advisory_xact_lock_shared(${LOCK}) FROM g), i AS (${insertFrom('l')}) SELECT count(*) FROM i, s;` },
  {
    name: 'design + notify',
    script: `WITH g AS (${gateShared}), s AS (${stripe}), l AS (SELECT pg_advisory_xact_lock_shared(${LOCK}), pg_notify('commit_locks_probe', 'x') FROM g), i AS (${insertFrom('l')}) SELECT count(*) FROM i, s;`,
  },
  { name: 'plain, transaction', script: inTransaction(insert) },
  { name: 'notify alone, transaction', script: inTransaction(insert, `SELECT pg_notify('commit_locks_probe', 'x')`) },
  { name: 'commit lock alone, transaction', script: inTransaction(`SELECT pg_advisory_xact_lock(${LOCK})`, insert) },
  { name: 'bump alone, transaction', script: inTransaction(`UPDATE ${S}.meta SET revision = revision + 1 WHERE id = 1`, insert) },
  { name: 'commit lock shared, transaction', script: inTransaction(`SELECT pg_advisory_xact_lock_shared(${LOCK})`, insert) },
];

const psql = (sql: string) => run('psql', [url, '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql]);
await psql(`DROP SCHEMA IF EXISTS ${S} CASCADE; CREATE SCHEMA ${S};
  CREATE TABLE ${S}.t (id bigserial PRIMARY KEY, v text, created bigint);
  CREATE TABLE ${S}.meta (id int PRIMARY KEY, version int, revision bigint); INSERT INTO ${S}.meta VALUES (1, 1, 0);
  CREATE TABLE ${S}.stripes (base_id int, stripe int, n bigint, PRIMARY KEY (base_id, stripe));
  INSERT INTO ${S}.stripes SELECT 1, s, 0 FROM generate_series(0, 15) AS s;`);
const dir = mkdtempSync(path.join(os.tmpdir(), 'commit-locks-'));
const rates = new Map<string, number[]>(targets.map((t) => [t.name, []]));
const ratios = new Map<string, number[]>(targets.map((t) => [t.name, []]));
console.log(`pgbench, ${CONNECTIONS} clients, ${SECONDS} s × ${ROUNDS} rounds; load before: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
try {
  for (let round = 0; round < ROUNDS; round++) {
    let plain = 0;
    for (const [i, target] of targets.entries()) {
      const file = path.join(dir, `${i}.sql`);
      writeFileSync(file, `${target.script}\n`);
      const { stdout } = await run('pgbench', ['-n', '-M', 'prepared', '-c', String(CONNECTIONS), '-j', '2', '-T', String(SECONDS), '-f', file, url], { maxBuffer: 1 << 24 });
      const tps = Number(/tps = ([0-9.]+)/.exec(stdout)?.[1] ?? 0);
      if (i === 0) plain = tps;
      rates.get(target.name)!.push(tps);
      ratios.get(target.name)!.push(plain > 0 ? tps / plain : 0);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  await psql(`DROP SCHEMA IF EXISTS ${S} CASCADE`);
}
const pct = (x: number) => `${Math.round(x * 100)}%`;
console.log(`${'target'.padEnd(42)} ${'tx/s'.padStart(7)}  vs plain (range)`);
for (const t of targets) {
  const r = ratios.get(t.name)!;
  console.log(`${t.name.padEnd(42)} ${Math.round(median(rates.get(t.name)!)).toString().padStart(7)}  ${pct(median(r))} (${pct(Math.min(...r))}–${pct(Math.max(...r))})`);
}
console.log(`load after: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
