/**
 * Issue 34 item 4: checks the event-id horizon of the concurrent-append design (docs/architecture.md,
 * "Concurrent appends of one base") on PostgreSQL, before it is built into the outbox.
 *
 * Writers (`pgbench`, BENCH_WRITERS = 8 clients) each draw a block of 1–5 event ids with `draw(n)`,
 * insert those rows, sleep 0–4 ms and commit; one in ten rolls back instead. So their commits come out
 * of id order. One reader at the same time repeats two statements:
 *  - it takes a horizon;
 *  - it copies into `seen` the rows with ids between the previous horizon and this one.
 * A correct horizon never lets a row through late. At the end, no committed row at or below the last
 * horizon may be missing from `seen`, and the horizon never moved back.
 *
 * The reader runs twice, each time with a fresh schema:
 *  - with the design's `horizon()`: the lowest first id among the writers' block locks in `pg_locks`,
 *    minus one, capped at the sequence's last value, read under the short draw lock;
 *  - with the control `max(id)`, which is what readers use today and is safe only while commits are
 *    serialized. It must be caught skipping rows, which shows the check can fail.
 *
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/pg-event-horizon.probe.ts
 *
 * Knobs: BENCH_SECONDS (20), BENCH_WRITERS (8). Works in a schema of its own (`event_horizon_probe`), dropped
 * at the end. Needs `pgbench` and `psql` on the PATH.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const url = process.env.BENCH_DATABASE_URL;
if (!url?.startsWith('postgres')) throw new Error('pg-event-horizon.probe needs BENCH_DATABASE_URL (PostgreSQL)');
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 8);
const run = promisify(execFile);
const S = 'event_horizon_probe';
const psql = async (sql: string) => (await run('psql', [url, '-qAtX', '-v', 'ON_ERROR_STOP=1', '-c', sql])).stdout.trim();

// draw(n): a block of n consecutive ids, announced by a transaction lock named by its first id (key
// space 0x7B in the top byte) taken before the short session lock 4471100 is let go. horizon(): under
// that lock, min(the sequence's last value, the lowest announced first id - 1).
const SETUP = `DROP SCHEMA IF EXISTS ${S} CASCADE; CREATE SCHEMA ${S};
CREATE SEQUENCE ${S}.ids;
CREATE TABLE ${S}.ev (id bigint PRIMARY KEY, v int);
CREATE TABLE ${S}.marks (k bigserial PRIMARY KEY, h bigint);
CREATE TABLE ${S}.seen (id bigint PRIMARY KEY);
CREATE FUNCTION ${S}.draw(n int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE first bigint;
BEGIN
  PERFORM pg_advisory_lock(4471100);
  BEGIN
    first := nextval('${S}.ids');
    IF n > 1 THEN PERFORM setval('${S}.ids', first + n - 1); END IF;
    PERFORM pg_advisory_xact_lock_shared((x'7B00000000000000'::bigint) | first);
  EXCEPTION WHEN OTHERS THEN PERFORM pg_advisory_unlock(4471100); RAISE;
  END;
  PERFORM pg_advisory_unlock(4471100);
  RETURN first;
END $$;
CREATE FUNCTION ${S}.horizon() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE l bigint; called boolean; m bigint;
BEGIN
  PERFORM pg_advisory_lock(4471100);
  BEGIN
    SELECT last_value, is_called INTO l, called FROM ${S}.ids;
    IF NOT called THEN l := 0; END IF;
    SELECT min(((classid::bigint & x'00FFFFFF'::bigint) << 32) | objid::bigint) INTO m
      FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND (classid::bigint >> 24) = x'7B'::bigint;
  EXCEPTION WHEN OTHERS THEN PERFORM pg_advisory_unlock(4471100); RAISE;
  END;
  PERFORM pg_advisory_unlock(4471100);
  RETURN least(l, coalesce(m - 1, l));
END $$;
CREATE FUNCTION ${S}.naive() RETURNS bigint LANGUAGE sql AS $$ SELECT coalesce(max(id), 0) FROM ${S}.ev $$;`;

const WRITER = `\\set n random(1, 5)
\\set r random(0, 9)
BEGIN;
INSERT INTO ${S}.ev SELECT d.f + g, 0 FROM (SELECT ${S}.draw(:n) AS f) d, generate_series(0, :n - 1) g;
SELECT pg_sleep(random() * 0.004);
\\if :r = 0
ROLLBACK;
\\else
COMMIT;
\\endif
`;
const WRITER_UNGUARDED = `\\set n random(1, 5)
BEGIN;
INSERT INTO ${S}.ev SELECT nextval('${S}.ids'), 0 FROM generate_series(1, :n);
SELECT pg_sleep(random() * 0.004);
COMMIT;
`;
const reader = (fn: string) => `INSERT INTO ${S}.marks (h) SELECT ${S}.${fn}();
INSERT INTO ${S}.seen SELECT e.id FROM ${S}.ev e
 WHERE e.id > (SELECT coalesce(max(h), 0) FROM ${S}.marks WHERE k < (SELECT max(k) FROM ${S}.marks))
   AND e.id <= (SELECT h FROM ${S}.marks ORDER BY k DESC LIMIT 1) ON CONFLICT DO NOTHING;
`;
const VERDICT = `SELECT (SELECT count(*) FROM ${S}.marks) || ' ' || (SELECT count(*) FROM ${S}.ev) || ' ' ||
  (SELECT count(*) FROM ${S}.ev e WHERE e.id <= (SELECT max(h) FROM ${S}.marks) AND NOT EXISTS (SELECT 1 FROM ${S}.seen s WHERE s.id = e.id)) || ' ' ||
  (SELECT count(*) FROM ${S}.marks a JOIN ${S}.marks b ON b.k = a.k + 1 WHERE b.h < a.h)`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'event-horizon-'));
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const bench = (clients: number, script: string) => run('pgbench', ['-n', '-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', String(SECONDS), '-f', script, url], { maxBuffer: 1 << 24 });
console.log(`${WRITERS} writers and one reader, ${SECONDS} s each; load before: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
let failed = false;
try {
  for (const [label, fn, writer, mustSkip] of [
    ['design: horizon()', 'horizon', WRITER, false],
    ['control: max(id)', 'naive', WRITER_UNGUARDED, true],
  ] as const) {
    await psql(SETUP);
    await Promise.all([bench(WRITERS, file(`w-${fn}.sql`, writer)), bench(1, file(`r-${fn}.sql`, reader(fn)))]);
    const [checks, events, skipped, back] = (await psql(VERDICT)).split(' ').map(Number) as [number, number, number, number];
    const ok = mustSkip ? skipped > 0 : skipped === 0 && back === 0;
    failed ||= !ok;
    console.log(`${label.padEnd(20)} ${checks} horizons, ${events} committed rows, ${skipped} let through late, horizon moved back ${back}× — ${ok ? 'as expected' : 'UNEXPECTED'}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
  await psql(`DROP SCHEMA IF EXISTS ${S} CASCADE`);
}
console.log(`load after: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
if (failed) process.exitCode = 1;
