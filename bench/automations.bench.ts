/**
 * Automations, two measurements (SQLite file; PostgreSQL too when BENCH_DATABASE_URL is given):
 *
 * 1. A `per_update` rule with three actions (notify, update_record, lock_record) on 1,000 single-row
 *    inserts, against the same inserts into a base without rules, in the same run, interleaved in
 *    rounds: the added latency per write (the rule is decided and run after the commit, so the write
 *    itself should not pay for it), and the time the dispatcher + runner need to perform the runs
 *    (runs/s), next to the dispatcher's time for the same inserts without a rule.
 * 2. The run_script action's start cost: a trivial script on the script thread (QuickJS runtime +
 *    context per run), and one with a base call.
 *
 *   npx tsx bench/automations.bench.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/automations.bench.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/index.js';
import { createContainer, type Container } from '../src/container.js';
import { migrateToLatest, type DialectName } from '../src/db/index.js';
import type { AccountUser } from '../src/modules/accounts/index.js';
import { ScriptThreads } from '../src/modules/automations/script-threads.js';
import { benchDatabase } from './lib/databases.js';

const PG_URL = process.env.BENCH_DATABASE_URL ?? null;
const INSERTS = Number(process.env.BENCH_INSERTS ?? 1000);
const ROUNDS = 4;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Side {
  base: { id: number; uuid: string };
  writeMs: number[];
  drainMs: number;
  runs: number;
}

const finishedRuns = async (c: Container) =>
  Number((await c.db.selectFrom('automation_runs').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'done').executeTakeFirstOrThrow()).n);

/** Dispatcher and runner until nothing is left (the runner is also woken after each batch's commit). */
async function drain(c: Container): Promise<{ ms: number; runs: number }> {
  const before = await finishedRuns(c);
  const started = performance.now();
  for (;;) {
    const report = await c.dispatcher.runOnce();
    if (report.failed.length > 0) throw new Error(`dispatch failed: ${JSON.stringify(report.failed)}`);
    const ran = await c.automations.runner.runDue();
    if (ran === 0 && report.handed === 0) break;
  }
  const ms = performance.now() - started;
  return { ms, runs: (await finishedRuns(c)) - before };
}

async function ruleCase(c: Container, owner: AccountUser) {
  const plainBase = await c.bases.create(owner, { name: 'plain' });
  const ruledBase = await c.bases.create(owner, { name: 'ruled' });
  await c.automations.rules.create(owner, { workspaceId: String(ruledBase.workspace_id), baseName: 'ruled' }, {
    run_condition: 'per_update',
    trigger: { rule_name: 'three actions', table_id: '0000', view_id: '0000', condition: 'rows_added' },
    actions: [
      { _id: 'n', type: 'notify', users: [owner.virtualId], default_msg: '{Name} was added' },
      { _id: 'u', type: 'update_record', updates: { '0000': 'seen {Name}' } },
      { _id: 'l', type: 'lock_record', is_locked: true },
    ],
  });
  const sides: Record<'plain' | 'ruled', Side> = {
    plain: { base: { id: plainBase.id, uuid: plainBase.uuid }, writeMs: [], drainMs: 0, runs: 0 },
    ruled: { base: { id: ruledBase.id, uuid: ruledBase.uuid }, writeMs: [], drainMs: 0, runs: 0 },
  };
  const actor = { user: owner.virtualId, app: null };
  const perRound = Math.ceil(INSERTS / ROUNDS);
  // Warm-up outside the figures.
  for (const side of Object.values(sides)) await c.baseData.rows.append(side.base, actor, { table_name: 'Table1', rows: [{ Name: 'warm' }] });
  await drain(c);
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of round % 2 === 0 ? (['plain', 'ruled'] as const) : (['ruled', 'plain'] as const)) {
      const side = sides[name];
      for (let i = 0; i < perRound; i++) {
        const t0 = performance.now();
        await c.baseData.rows.append(side.base, actor, { table_name: 'Table1', rows: [{ Name: `row ${round}-${i}` }] });
        side.writeMs.push(performance.now() - t0);
      }
      const d = await drain(c);
      side.drainMs += d.ms;
      side.runs += d.runs;
    }
  }
  if (sides.ruled.runs !== perRound * ROUNDS) throw new Error(`expected ${perRound * ROUNDS} runs, got ${sides.ruled.runs}`);
  const failed = await c.db.selectFrom('automation_runs').select('id').where('status', '!=', 'done').execute();
  if (failed.length > 0) throw new Error(`${failed.length} runs did not finish`);
  return sides;
}

async function runDialect(dialect: DialectName) {
  const dir = mkdtempSync(path.join(tmpdir(), 'basegate-bench-'));
  const db = await benchDatabase(dialect, dir, { pgUrl: PG_URL, poolSize: 5 });
  // The per-minute run limit would drop most of 1,000 runs made within a minute.
  const config = loadConfig({ SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789', DATA_DIR: dir, LOG_LEVEL: 'silent', AUTOMATION_RUNS_PER_MINUTE: '1000000' }, { persistSecret: false });
  const c = createContainer(config, { database: db.handle });
  try {
    await migrateToLatest(c.db);
    const owner = await c.accounts.createUser({ email: 'bench@example.com', password: 'password-123', name: 'Bench' });
    const { plain, ruled } = await ruleCase(c, owner);
    const p = median(plain.writeMs);
    const r = median(ruled.writeMs);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(`\n[${dialect}] ${plain.writeMs.length} single-row inserts per side, ${ROUNDS} interleaved rounds`);
    console.log(`write latency without a rule: median ${p.toFixed(3)} ms, mean ${mean(plain.writeMs).toFixed(3)} ms`);
    console.log(`write latency with the rule:  median ${r.toFixed(3)} ms, mean ${mean(ruled.writeMs).toFixed(3)} ms`);
    console.log(`added per write: median ${(r - p).toFixed(3)} ms (ratio ${(r / p).toFixed(2)}x)`);
    console.log(`after the commits: dispatcher without a rule ${plain.drainMs.toFixed(0)} ms; dispatcher + runner with the rule ${ruled.drainMs.toFixed(0)} ms for ${ruled.runs} runs × 3 actions`);
    console.log(`runs/s ${((ruled.runs / ruled.drainMs) * 1000).toFixed(0)}; after-commit work ratio ${(ruled.drainMs / plain.drainMs).toFixed(1)}x`);
  } finally {
    await c.close();
    await db.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

await runDialect('sqlite');
if (PG_URL) await runDialect('postgres');

// 2. run_script start cost.

const RUNS = 300;
const threads = new ScriptThreads();
const job = (code: string) => ({ code, row: { _id: 'r1', Name: 'x' }, cpuMs: 1000, memoryBytes: 32 << 20, outputBytes: 65536 });
const host = async () => ({ ok: true });

const first = performance.now();
await threads.run(job(''), host, 30_000);
const firstMs = performance.now() - first;

async function measure(code: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await threads.run(job(code), host, 30_000);
    if (!r.ok) throw new Error(r.error);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!.toFixed(2);
const empty = await measure('');
const oneCall = await measure("await base.getRow('T', row._id); console.log(row.Name);");
await threads.close();
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`first script (thread start + WebAssembly load): ${firstMs.toFixed(1)} ms`);
console.log(`empty script, ${RUNS} runs: median ${pct(empty, 0.5)} ms, p95 ${pct(empty, 0.95)} ms`);
console.log(`script with one base call + console.log: median ${pct(oneCall, 0.5)} ms, p95 ${pct(oneCall, 0.95)} ms`);
