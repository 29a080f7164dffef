/**
 * What least privilege costs on a write (issue 33): a single-row insert through the gateway with a
 * Base-Token from
 *   - plain:  an unscoped `rw` API-Token (no scope to check),
 *   - scoped: an API-Token scoped to the table, two operations, a network and its own rate budget
 *             (every scope dimension checked on the request),
 *   - scoped + audit: the same, followed by one audit-log append (what an audited write adds),
 * interleaved in rounds in one process on one database, so the ratios compare like with like.
 * Requests go through `app.inject` (the whole Fastify pipeline, no sockets): server work only.
 *
 *   npx tsx bench/security-write.bench.ts     # BENCH_ROUNDS=5 BENCH_OPS=200 (well under a minute)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/security-write.bench.ts
 */
import { startBasegate } from './lib/servers.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const OPS = Number(process.env.BENCH_OPS ?? 200);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0' });
  const { app, container, seeded } = basegate;
  try {
    const account = { authorization: `Token ${seeded.accountToken}` };
    const created = await app.inject({
      method: 'POST',
      url: `/api/v2.1/workspace/${seeded.base.workspace_id}/dtable/bench/api-tokens/`,
      headers: account,
      payload: { app_name: 'scoped', permission: 'rw', tables: ['Table1'], operations: ['read_rows', 'write_rows'], allowed_networks: ['127.0.0.0/8'], rate_limit: 1_000_000 },
    });
    if (created.statusCode >= 300) throw new Error(`scoped token: ${created.statusCode} ${created.body}`);
    const exchanged = await app.inject({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${created.json<{ api_token: string }>().api_token}` } });
    const scopedToken = exchanged.json<{ access_token: string }>().access_token;
    const url = `/api-gateway/api/v2/dtables/${seeded.base.uuid}/rows/`;
    const insert = async (token: string) => {
      const res = await app.inject({ method: 'POST', url, remoteAddress: '127.0.0.1', headers: { authorization: `Token ${token}` }, payload: { table_name: 'Table1', rows: [{ Name: 'bench' }] } });
      if (res.statusCode !== 200) throw new Error(`insert: ${res.statusCode} ${res.body}`);
    };
    const cases: Array<[string, () => Promise<void>]> = [
      ['plain', () => insert(seeded.baseToken)],
      ['scoped', () => insert(scopedToken)],
      [
        'scoped + audit',
        async () => {
          await insert(scopedToken);
          await container.audit.record({ action: 'bench.write', actor: 'bench', ip: '127.0.0.1', target: url, baseId: null, after: { table_name: 'Table1', rows: [{ Name: 'bench' }] } });
        },
      ],
    ];
    // Warm-up: compile schemas, fill caches.
    for (const [, run] of cases) for (let i = 0; i < 50; i += 1) await run();
    const perOp: Record<string, number[]> = Object.fromEntries(cases.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [name, run] of cases) {
        const start = process.hrtime.bigint();
        for (let i = 0; i < OPS; i += 1) await run();
        perOp[name]!.push(Number(process.hrtime.bigint() - start) / 1000 / OPS);
      }
    }
    const plain = median(perOp.plain!);
    console.log(`${container.dialect}, ${ROUNDS} rounds x ${OPS} single-row inserts per case, Node ${process.version}`);
    for (const [name] of cases) {
      const value = median(perOp[name]!);
      console.log(`${name.padEnd(16)} ${value.toFixed(0).padStart(6)} µs/insert (median of rounds)  ${((value / plain) * 100).toFixed(1)}% of plain`);
    }
  } finally {
    await basegate.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
