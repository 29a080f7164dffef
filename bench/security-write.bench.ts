/**
 * What least privilege and the audit trail cost (issue 33: "scope checks and audit writes cost under
 * 5% on a token-authenticated 100-row read and a single-row insert, same run, against the same calls
 * with scopes and audit off"). Each call goes through the gateway with a Base-Token from
 *   - plain:          an unscoped `rw` API-Token, with the audit log's per-use listener detached (audit off),
 *   - scoped:         an API-Token scoped to the table, two operations, a network and its own rate
 *                     budget (every scope dimension checked on the request), audit listener attached,
 *   - scoped, scope:  the scoped insert in a commit scope without a row: the context tracking alone,
 *   - scoped + audit: the same, and the call audited as an audited route is (plugins/audit-trail.ts):
 *                     in a commit scope opened at the end of the preHandler hooks (a hook of this
 *                     bench does what the trail's does), whose row commits with the insert: chained at
 *                     once in its transaction on SQLite; on PostgreSQL appended as parts of the insert's
 *                     one statement (CommitAppendix.addTo), and every row sealed into the hash chain
 *                     within the timed round.
 * A third group times the audit write alone: a Kysely transaction inserting one row, plain, in a
 * commit scope, and with the audit row's appendix (no HTTP around it, so less noise).
 * A read is not audited (the trail records security changes, not reads); what auditing adds to it is
 * the per-use new-network check, which the scoped cases carry. Cases are interleaved in rounds in one
 * process on one database, so the ratios compare like with like; each round's ratio to plain is taken
 * within the round. Wall and CPU time (of this process) per call are printed: on a loaded machine CPU
 * time swings less. Requests go through `app.inject` (the whole Fastify pipeline, no sockets): server
 * work only. `bench/security-write.profile.ts` runs one case alone for `--cpu-prof`.
 *
 *   BENCH_ROUNDS=9 BENCH_OPS=150 npx tsx bench/security-write.bench.ts     # defaults 7 and 200
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<db> npx tsx bench/security-write.bench.ts
 */
import { loadavg } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { CommitScope, withCommitScope } from '../src/db/index.js';
import { scopedBaseToken, startBasegate } from './lib/servers.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const OPS = Number(process.env.BENCH_OPS ?? 200);
const READ_ROWS = 100;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  let lastScope: CommitScope | undefined;
  // The commit scope of an audited request, opened as plugins/audit-trail.ts opens it: at the end of
  // the preHandler hooks, with the row's appendix; `x-bench-audit: scope` opens one without a row.
  const auditHooks = (app: FastifyInstance) => {
    app.addHook('preHandler', (request, _reply, done) => {
      const mode = request.headers['x-bench-audit'];
      if (mode !== 'scope' && mode !== 'row') return done();
      const scope = new CommitScope();
      if (mode === 'row') scope.appendix = basegate.container.audit.appendix(async () => ({ action: 'bench.insert', actor: 'api-token:scoped', ip: request.ip, target: `POST ${request.url}`, after: request.body }));
      lastScope = scope;
      scope.run(() => done());
    });
    app.addHook('onResponse', (_request, _reply, done) => {
      lastScope?.end();
      done();
    });
  };
  const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0' }, { routes: auditHooks });
  const { app, container, seeded } = basegate;
  try {
    const scopedToken = await scopedBaseToken(basegate);
    const url = `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/`;

    // Audit off: the only audit work a gateway call does is the API-Token's new-network listener.
    const listeners = (container.tokens.apiTokens as unknown as { useListeners: Array<(id: number, ip: string) => void> }).useListeners;
    const auditListeners = [...listeners];
    const auditOff = () => listeners.splice(0, listeners.length);
    const auditOn = () => listeners.splice(0, listeners.length, ...auditListeners);

    const insert = async (token: string, audit?: 'scope' | 'row') => {
      const headers = { authorization: `Token ${token}`, ...(audit ? { 'x-bench-audit': audit } : {}) };
      const res = await app.inject({ method: 'POST', url, remoteAddress: '127.0.0.1', headers, payload: { table_name: 'Table1', rows: [{ Name: 'bench' }] } });
      if (res.statusCode !== 200) throw new Error(`insert: ${res.statusCode} ${res.body}`);
    };
    const scopedInsert = (token: string) => insert(token, 'scope');
    const auditedInsert = async (token: string) => {
      await insert(token, 'row');
      if (!lastScope?.written) throw new Error('the audit row did not commit with the insert');
    };
    const read = async (token: string) => {
      const res = await app.inject({ method: 'GET', url: `${url}?table_name=Table1&limit=${READ_ROWS}`, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${token}` } });
      if (res.statusCode !== 200 || res.json<{ rows: unknown[] }>().rows.length !== READ_ROWS) throw new Error(`read: ${res.statusCode} ${res.body.slice(0, 200)}`);
    };
    for (let i = 0; i < READ_ROWS; i += 1) await insert(seeded.baseToken);
    // The audit write alone, without HTTP: a transaction inserting one row, in a commit scope, with the row's appendix.
    const owner = (await container.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
    const write = async () => {
      await container.db.transaction().execute((trx) => trx.insertInto('workspaces').values({ owner_id: owner, type: 'bench', created_at: 0 }).execute());
    };
    const auditedWrite = async () => {
      const scope = new CommitScope();
      scope.appendix = container.audit.appendix(async () => ({ action: 'bench.insert', actor: 'api-token:scoped', ip: '127.0.0.1', target: `POST ${url}`, after: { table_name: 'Table1', rows: [{ Name: 'bench' }] } }));
      await withCommitScope(scope, write);
    };

    type Case = { name: string; setup: () => void; run: () => Promise<void>; after?: () => Promise<unknown> };
    const groups: Array<[string, Case[]]> = [
      [
        'single-row insert',
        [
          { name: 'plain', setup: auditOff, run: () => insert(seeded.baseToken) },
          { name: 'scoped', setup: auditOn, run: () => insert(scopedToken) },
          // What the context tracking alone costs (promise hooks while a scope is open): no row.
          { name: 'scoped, scope', setup: auditOn, run: () => scopedInsert(scopedToken) },
          // PostgreSQL seals after the commit, off the request; it is timed with this case's round.
          { name: 'scoped + audit', setup: auditOn, run: () => auditedInsert(scopedToken), after: () => container.audit.seal() },
        ],
      ],
      [
        'one-row transaction (no HTTP)',
        [
          { name: 'plain', setup: auditOn, run: write },
          { name: 'scope', setup: auditOn, run: () => withCommitScope(new CommitScope(), write) },
          { name: 'audited', setup: auditOn, run: auditedWrite, after: () => container.audit.seal() },
        ],
      ],
      [
        `${READ_ROWS}-row read`,
        [
          { name: 'plain', setup: auditOff, run: () => read(seeded.baseToken) },
          { name: 'scoped + audit', setup: auditOn, run: () => read(scopedToken) },
        ],
      ],
    ];
    // Warm-up: compile schemas, fill caches.
    for (const [, cases] of groups) {
      for (const c of cases) {
        c.setup();
        for (let i = 0; i < 50; i += 1) await c.run();
        await c.after?.();
      }
    }
    type Sample = { wall: number; cpu: number };
    const samples = new Map<Case, Sample[]>();
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [, cases] of groups) {
        // Alternate the order each round so no case always follows the same one.
        for (const c of round % 2 === 0 ? cases : [...cases].reverse()) {
          c.setup();
          const cpu = process.cpuUsage();
          const start = process.hrtime.bigint();
          for (let i = 0; i < OPS; i += 1) await c.run();
          await c.after?.();
          const used = process.cpuUsage(cpu);
          const list = samples.get(c) ?? [];
          list.push({ wall: Number(process.hrtime.bigint() - start) / 1000 / OPS, cpu: (used.user + used.system) / OPS });
          samples.set(c, list);
        }
      }
    }
    auditOn();
    const verified = await container.audit.verify();
    console.log(`${container.dialect}, ${ROUNDS} rounds x ${OPS} calls per case, Node ${process.version}, load ${loadavg().map((l) => l.toFixed(1)).join(' ')}; audit chain ${verified.ok ? 'intact' : 'BROKEN'}: ${verified.rows} rows`);
    console.log('per call: median of rounds; % of plain: median [min–max] of the ratios taken within each round (CPU: this process, so on PostgreSQL without the server\'s)');
    for (const [group, cases] of groups) {
      const plain = samples.get(cases[0]!)!;
      console.log(group);
      for (const c of cases) {
        const mine = samples.get(c)!;
        const column = (key: keyof Sample) => {
          const ratios = mine.map((sample, round) => (sample[key] / plain[round]![key]) * 100);
          return `${median(mine.map((sample) => sample[key])).toFixed(0).padStart(5)} µs ${median(ratios).toFixed(1).padStart(6)}% [${Math.min(...ratios).toFixed(0)}–${Math.max(...ratios).toFixed(0)}]`;
        };
        console.log(`  ${c.name.padEnd(16)} wall ${column('wall')}   CPU ${column('cpu')}`);
      }
    }
  } finally {
    await basegate.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
