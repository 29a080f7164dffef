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
 * load); a round is OPS calls of each, and each round's ratios to `off A` are taken within the round.
 * Requests go through `app.inject` (the whole Fastify pipeline, no sockets); only the call is timed
 * (the answer is checked after the clock stops: parsing it is the client's work). CPU is this
 * process's (process.cpuUsage; on PostgreSQL the server's is not in it — the same statements for every
 * case, so leaving it out makes the ratios larger, not smaller). Fairness between the cases:
 *   - each group's round starts with one untimed call of each case: the first read after the insert
 *     group rebuilds the read caches, and that must not land on whichever case happens to come first;
 *   - each group's round starts with a full garbage collection (untimed): a major collection is paid
 *     for by the whole process's heap growth, and landing on one call it decided a round's ratio
 *     (one 20–50 ms pause in 150 calls of 0.3 ms). Young-generation collections stay in the timed
 *     calls, where they land in proportion to what each case allocates; the allocation per call
 *     (median growth of the V8 heap over the calls without a collection) is printed beside.
 * Printed per case: the median over rounds of its mean and of its median CPU per call; the ratios to
 * `off A` of the means and of the medians within each round (median, mean and quartiles over rounds),
 * and the ratio of all rounds' CPU together with a 95% bootstrap interval (rounds resampled).
 * `bench/security-write.profile.ts` runs one case alone for `--cpu-prof`.
 *
 *   BENCH_ROUNDS=60 BENCH_OPS=100 npx tsx bench/security-write.bench.ts     # the defaults
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/security-write.bench.ts
 *   BENCH_ABLATION=1 npx tsx bench/security-write.bench.ts   # + reads with tokens scoped in one dimension each
 */
import { loadavg } from 'node:os';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { CommitScope, withCommitScope } from '../src/db/index.js';
import { EVERY_DIMENSION, scopedBaseToken, startBasegate } from './lib/servers.js';
import { mean, pooled, quantile } from './lib/ratios.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 60);
const OPS = Number(process.env.BENCH_OPS ?? 100);
/** Calls of one case in a row (the first untimed, after the case's untimed switch-in call); 1: call by call, none untimed. */
const BLOCK = Number(process.env.BENCH_BLOCK ?? 10);
/** Untimed calls at the start of each block (with BLOCK > 1): the switch from the other app instance. */
const WARM = Number(process.env.BENCH_WARM ?? 3);
const READ_ROWS = 100;
/**
 * The per-base limit of gateway calls. As served it is on (500 a minute by default), so every gateway
 * answer carries the `x-ratelimit-*` usage headers (contract §9) with scopes on or off; here it is on
 * but never reached (a run makes far fewer calls a minute). `BENCH_BASE_LIMIT=0` turns it off, as
 * this bench did before: then only the budgeted scoped token's answers carry the headers, and the
 * comparison charges the scope with three headers the served configuration sends anyway.
 */
const BASE_LIMIT = process.env.BENCH_BASE_LIMIT ?? '10000000';

setFlagsFromString('--expose-gc');
/** A full collection, between rounds (untimed). */
const collect = runInNewContext('gc') as () => void;

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

type Answer = { statusCode: number; body: string; json<T>(): T } | void;

async function main(): Promise<void> {
  const loadAtStart = load();
  // A server error is printed (the apps log nothing): the case that hit it then stops the run.
  const printErrors = (name: string) => (app: FastifyInstance) =>
    app.addHook('onError', (_request, _reply, error, done) => {
      console.error(`${name}:`, error);
      done();
    });
  const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: BASE_LIMIT }, { routes: printErrors('served') });
  const { app: served, container, seeded } = basegate;
  // Scopes and audit off: the same container and database, built without the trail and the per-use work.
  const off = await buildApp(container, { logger: false, withoutAudit: true });
  printErrors('off')(off);
  await off.ready();
  try {
    const scopedToken = await scopedBaseToken(basegate);
    const url = `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/`;
    const insert = (app: FastifyInstance, token: string) =>
      app.inject({ method: 'POST', url, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${token}` }, payload: { table_name: 'Table1', rows: [{ Name: 'bench' }] } });
    const inserted = (res: Answer) => {
      if (res && res.statusCode !== 200) throw new Error(`insert: ${res.statusCode} ${res.body}`);
    };
    const read = (app: FastifyInstance, token: string) =>
      app.inject({ method: 'GET', url: `${url}?table_name=Table1&limit=${READ_ROWS}`, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${token}` } });
    const readAll = (res: Answer) => {
      if (res && (res.statusCode !== 200 || res.json<{ rows: unknown[] }>().rows.length !== READ_ROWS)) throw new Error(`read: ${res.statusCode} ${res.body.slice(0, 200)}`);
    };
    for (let i = 0; i < READ_ROWS; i += 1) inserted(await insert(off, seeded.baseToken));
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

    /** `run` is timed; `check` (untimed) looks at its answer. */
    type Case = { name: string; run: () => Promise<Answer>; check?: (answer: Answer) => void; after?: () => Promise<unknown> };
    const asServed = (call: (app: FastifyInstance, token: string) => Promise<Answer>, check: (answer: Answer) => void): Case[] => [
      // Alternating apps: in the rotation each of these four follows a case of the other app, so the
      // switch between the two instances weighs on all four alike (it fell on `served, scoped` alone
      // when it followed `off B`: +10-20% on a read).
      { name: 'off A', run: () => call(off, seeded.baseToken), check },
      { name: 'served, scoped', run: () => call(served, scopedToken), check },
      { name: 'off B (control)', run: () => call(off, seeded.baseToken), check },
      { name: 'served, unscoped', run: () => call(served, seeded.baseToken), check },
    ];
    // BENCH_ABLATION=1: the read group also runs the served app with tokens scoped in one dimension each
    // (each dimension's share of the every-dimension cost, in the same run).
    const ablation: Case[] = [];
    if (process.env.BENCH_ABLATION === '1') {
      for (const [dimension, value] of Object.entries(EVERY_DIMENSION)) {
        const token = await scopedBaseToken(basegate, { [dimension]: value }, `only ${dimension}`);
        ablation.push({ name: `only ${dimension}`, run: () => read(served, token), check: readAll });
      }
    }
    const groups: Array<[string, Case[]]> = [
      ['single-row insert', asServed(insert, inserted)],
      [`${READ_ROWS}-row read`, [...asServed(read, readAll), ...ablation]],
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
        for (let i = 0; i < 100; i += 1) c.check?.(await c.run());
        await c.after?.();
      }
    }
    /** Per case and round: mean and median CPU µs per call, mean wall µs, median heap growth (bytes) per call without a collection. */
    type Sample = { cpu: number; cpuMedian: number; wall: number; heap: number };
    const samples = new Map<Case, Sample[]>();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [, cases] of groups) {
        // Untimed: one call of each (the caches the other group's writes invalidated), then a full collection.
        for (const c of cases) c.check?.(await c.run());
        collect();
        // Interleaved block by block, the order rotating with every block: each case takes each position
        // equally often, and all see the same moments of the machine's load. A block starts with WARM
        // untimed calls: the cases run on two app instances, and the calls after a switch pay for the
        // other instance's code and data leaving the CPU's caches (with BLOCK=1, call by call, that
        // cost fell on whichever cases follow a case of the other app: +10-20% on a read).
        const calls = cases.map(() => ({ cpu: [] as number[], wall: 0, heap: [] as number[] }));
        for (let block = 0; block * BLOCK < OPS; block += 1) {
          for (let k = 0; k < cases.length; k += 1) {
            const index = (k + block + round) % cases.length;
            const c = cases[index]!;
            if (BLOCK > 1) for (let w = 0; w < WARM; w += 1) c.check?.(await c.run());
            for (let i = block * BLOCK; i < Math.min(OPS, (block + 1) * BLOCK); i += 1) {
              const heap = getHeapStatistics().used_heap_size;
              const cpu = process.cpuUsage();
              const start = process.hrtime.bigint();
              const answer = await c.run();
              const wall = Number(process.hrtime.bigint() - start) / 1000;
              const used = process.cpuUsage(cpu);
              const grown = getHeapStatistics().used_heap_size - heap;
              c.check?.(answer);
              const mine = calls[index]!;
              mine.wall += wall;
              mine.cpu.push(used.user + used.system);
              if (grown > 0) mine.heap.push(grown);
            }
          }
        }
        // PostgreSQL seals after the commit, off the request: the round's seals are charged to the case that appended.
        for (let index = 0; index < cases.length; index += 1) {
          const c = cases[index]!;
          const mine = calls[index]!;
          let extra = 0;
          if (c.after) {
            const cpu = process.cpuUsage();
            const start = process.hrtime.bigint();
            await c.after();
            mine.wall += Number(process.hrtime.bigint() - start) / 1000;
            const used = process.cpuUsage(cpu);
            extra = used.user + used.system;
          }
          const list = samples.get(c) ?? [];
          list.push({ cpu: (mean(mine.cpu) * OPS + extra) / OPS, cpuMedian: quantile(mine.cpu, 0.5), wall: mine.wall / OPS, heap: mine.heap.length > 0 ? quantile(mine.heap, 0.5) : 0 });
          samples.set(c, list);
        }
      }
    }
    const verified = await container.audit.verify();
    console.log(
      `${container.dialect}, ${ROUNDS} rounds x ${OPS} calls per case in blocks of ${BLOCK} (+${WARM} untimed), base limit ${BASE_LIMIT === '0' ? 'off' : `${BASE_LIMIT}/min`}, Node ${process.version}, load ${loadAtStart} at start, ${load()} at end; audit chain ${verified.ok ? 'intact' : 'BROKEN'}: ${verified.rows} rows`,
    );
    console.log('CPU µs per call (this process): median over rounds of each round\'s mean and median; % of the first case, within each round:');
    console.log('  mean-of-calls ratio: median [quartiles] of rounds, mean of rounds, all rounds pooled (95% bootstrap interval);');
    console.log('  median-of-calls ratio: median [quartiles] of rounds. Heap: median bytes allocated per call. Wall: median over rounds of the mean.');
    for (const [group, cases] of groups) {
      const base = samples.get(cases[0]!)!;
      console.log(group);
      for (const c of cases) {
        const mine = samples.get(c)!;
        const ratios = (key: 'cpu' | 'cpuMedian' | 'wall') => mine.map((sample, round) => (sample[key] / base[round]![key]) * 100);
        const spread = (values: number[]) => `${quantile(values, 0.5).toFixed(1).padStart(6)}% [${quantile(values, 0.25).toFixed(1)}–${quantile(values, 0.75).toFixed(1)}]`;
        const meanRatios = ratios('cpu');
        const all = pooled(mine.map((s) => s.cpu), base.map((s) => s.cpu));
        const us = (key: keyof Sample) => quantile(mine.map((s) => s[key]), 0.5).toFixed(0).padStart(5);
        console.log(
          `  ${c.name.padEnd(18)} CPU mean ${us('cpu')} µs ${spread(meanRatios)} mean ${mean(meanRatios).toFixed(1)}% pooled ${all.ratio.toFixed(1)}% (${all.low.toFixed(1)}–${all.high.toFixed(1)})` +
            ` | CPU median ${us('cpuMedian')} µs ${spread(ratios('cpuMedian'))} | heap ${us('heap')} B | wall ${us('wall')} µs ${spread(ratios('wall'))}`,
        );
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
