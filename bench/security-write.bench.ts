/**
 * What least privilege and the audit trail cost a token-authenticated call (issue 33: "scope checks and
 * audit writes cost under 5% on a token-authenticated 100-row read and a single-row insert, same run,
 * against the same calls with scopes and audit off"). The configuration as served is measured:
 *   - off A, off B:   an app built on the same container with `withoutAudit` (no audit trail hooks, no
 *                     per-use work for API-Tokens: request counts, last address, new-network check),
 *                     called with the Base-Token of an unscoped `rw` API-Token: scopes and audit off.
 *                     The two are the same configuration: B/A is the control, the method's own spread.
 *   - served, scoped: the app as `npm start` builds it (trail and per-use work on), called with the
 *                     Base-Token of an API-Token scoped in every dimension (one table, two operations,
 *                     a network, its own rate budget): every scope check runs on every call.
 *   - served, unscoped (informational): the served app with the unscoped token (the trail and the
 *                     per-use work without scope checks).
 * No row write is audited (the trail records security changes: tokens, shares, webhooks, rules,
 * sign-ins, admin actions), so neither call carries an audit row. What one audited change costs is
 * the second table: a one-row transaction, plain and carrying its audit row (no HTTP, less noise).
 *
 * One process, one database. The cases of a group are interleaved call by call, their order rotating
 * with every call (each takes each position equally often, all see the same moments of the machine's
 * load); a round is OPS calls of each, and each round's ratio to `off A` is taken within the round; the median and quartiles of those ratios are printed, for wall and CPU time (of this
 * process; on PostgreSQL the server's CPU is not in it). Requests go through `app.inject` (the whole
 * Fastify pipeline, no sockets): server work only. `bench/security-write.profile.ts` runs one case alone for `--cpu-prof`.
 *
 *   BENCH_ROUNDS=20 BENCH_OPS=150 npx tsx bench/security-write.bench.ts     # defaults 20 and 150
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/security-write.bench.ts
 */
import { loadavg } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { CommitScope, withCommitScope } from '../src/db/index.js';
import { scopedBaseToken, startBasegate } from './lib/servers.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const OPS = Number(process.env.BENCH_OPS ?? 150);
const READ_ROWS = 100;

const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
/** Nearest-rank quantile. */
const quantile = (values: number[], q: number) => sorted(values)[Math.round(q * (values.length - 1))]!;
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

async function main(): Promise<void> {
  const loadAtStart = load();
  // A server error is printed (the apps log nothing): the case that hit it then stops the run.
  const printErrors = (name: string) => (app: FastifyInstance) =>
    app.addHook('onError', (_request, _reply, error, done) => {
      console.error(`${name}:`, error);
      done();
    });
  const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0' }, { routes: printErrors('served') });
  const { app: served, container, seeded } = basegate;
  // Scopes and audit off: the same container and database, built without the trail and the per-use work.
  const off = await buildApp(container, { logger: false, withoutAudit: true });
  printErrors('off')(off);
  await off.ready();
  try {
    const scopedToken = await scopedBaseToken(basegate);
    const url = `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/`;
    const insert = async (app: FastifyInstance, token: string) => {
      const res = await app.inject({ method: 'POST', url, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${token}` }, payload: { table_name: 'Table1', rows: [{ Name: 'bench' }] } });
      if (res.statusCode !== 200) throw new Error(`insert: ${res.statusCode} ${res.body}`);
    };
    const read = async (app: FastifyInstance, token: string) => {
      const res = await app.inject({ method: 'GET', url: `${url}?table_name=Table1&limit=${READ_ROWS}`, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${token}` } });
      if (res.statusCode !== 200 || res.json<{ rows: unknown[] }>().rows.length !== READ_ROWS) throw new Error(`read: ${res.statusCode} ${res.body.slice(0, 200)}`);
    };
    for (let i = 0; i < READ_ROWS; i += 1) await insert(off, seeded.baseToken);
    // The audited change alone, without HTTP: a one-row transaction, plain and carrying its audit row.
    const owner = (await container.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
    const write = async () => {
      await container.db.transaction().execute((trx) => trx.insertInto('workspaces').values({ owner_id: owner, type: 'bench', created_at: 0 }).execute());
    };
    const auditedWrite = async () => {
      const scope = new CommitScope();
      scope.appendix = container.audit.appendix(async () => ({ action: 'bench.change', actor: 'bench@example.com', ip: '127.0.0.1', target: 'POST /bench', after: { app_name: 'bench', permission: 'rw' } }));
      await withCommitScope(scope, write);
      if (!scope.written) throw new Error('the audit row did not commit with the change');
    };

    type Case = { name: string; run: () => Promise<void>; after?: () => Promise<unknown> };
    const asServed = (call: (app: FastifyInstance, token: string) => Promise<void>): Case[] => [
      { name: 'off A', run: () => call(off, seeded.baseToken) },
      { name: 'off B (control)', run: () => call(off, seeded.baseToken) },
      { name: 'served, scoped', run: () => call(served, scopedToken) },
      { name: 'served, unscoped', run: () => call(served, seeded.baseToken) },
    ];
    const groups: Array<[string, Case[]]> = [
      ['single-row insert', asServed(insert)],
      [`${READ_ROWS}-row read`, asServed(read)],
      [
        'an audited change: one-row transaction (no HTTP), informational',
        [
          { name: 'plain', run: write },
          // PostgreSQL seals after the commit, off the request; the seals are timed with this case's round.
          { name: 'with its audit row', run: auditedWrite, after: () => container.audit.seal() },
        ],
      ],
    ];
    // Warm-up: compile schemas, fill caches.
    for (const [, cases] of groups) {
      for (const c of cases) {
        for (let i = 0; i < 50; i += 1) await c.run();
        await c.after?.();
      }
    }
    type Sample = { wall: number; cpu: number };
    const samples = new Map<Case, Sample[]>();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [, cases] of groups) {
        // Interleaved call by call, the order rotating with every call: each case takes each position
        // equally often, and all see the same moments of the machine's load.
        const sums = cases.map(() => ({ wall: 0, cpu: 0 }));
        for (let i = 0; i < OPS; i += 1) {
          for (let k = 0; k < cases.length; k += 1) {
            const index = (k + i + round) % cases.length;
            const cpu = process.cpuUsage();
            const start = process.hrtime.bigint();
            await cases[index]!.run();
            const wall = Number(process.hrtime.bigint() - start) / 1000;
            const used = process.cpuUsage(cpu);
            sums[index]!.wall += wall;
            sums[index]!.cpu += used.user + used.system;
          }
        }
        // PostgreSQL seals after the commit, off the request: the round's seals are charged to the case that appended.
        for (let index = 0; index < cases.length; index += 1) {
          const c = cases[index]!;
          if (c.after) {
            const cpu = process.cpuUsage();
            const start = process.hrtime.bigint();
            await c.after();
            sums[index]!.wall += Number(process.hrtime.bigint() - start) / 1000;
            const used = process.cpuUsage(cpu);
            sums[index]!.cpu += used.user + used.system;
          }
          const list = samples.get(c) ?? [];
          list.push({ wall: sums[index]!.wall / OPS, cpu: sums[index]!.cpu / OPS });
          samples.set(c, list);
        }
      }
    }
    const verified = await container.audit.verify();
    console.log(
      `${container.dialect}, ${ROUNDS} rounds x ${OPS} calls per case, Node ${process.version}, load ${loadAtStart} at start, ${load()} at end; audit chain ${verified.ok ? 'intact' : 'BROKEN'}: ${verified.rows} rows`,
    );
    console.log("per call: median of rounds; % of the first case: median [quartiles] {min–max} of the ratios taken within each round (CPU: this process's, so on PostgreSQL without the server's)");
    for (const [group, cases] of groups) {
      const base = samples.get(cases[0]!)!;
      console.log(group);
      for (const c of cases) {
        const mine = samples.get(c)!;
        const column = (key: keyof Sample) => {
          const ratios = mine.map((sample, round) => (sample[key] / base[round]![key]) * 100);
          const pct = (q: number) => quantile(ratios, q).toFixed(1);
          return `${quantile(mine.map((s) => s[key]), 0.5).toFixed(0).padStart(5)} µs ${pct(0.5).padStart(6)}% [${pct(0.25)}–${pct(0.75)}] {${Math.min(...ratios).toFixed(0)}–${Math.max(...ratios).toFixed(0)}}`;
        };
        console.log(`  ${c.name.padEnd(18)} wall ${column('wall')}   CPU ${column('cpu')}`);
      }
    }
  } finally {
    await off.close();
    await basegate.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
