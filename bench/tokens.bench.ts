/**
 * Token hot paths against a bare Fastify route answering a constant, side by side in one run:
 *   - GET /api/v2.1/dtable/app-access-token/ with an API-Token (lookup, version, sign a Base-Token)
 *   - GET /api-gateway/api/v2/dtables/{uuid}/ with a Base-Token (verify, base, revocation, then the
 *     rows module's handler reading the base)
 *   - the same Base-Token check in front of a constant, to separate the token work from that handler
 *   - a constant in the basegate app without any credential: the app's own per-request cost
 * Aims: at least 40% and 50% of the bare route's requests per second. Each target also reports the
 * server CPU time per request (autocannon runs in a child process, so it is not counted), which
 * depends far less on the load generator sharing the machine than requests per second do.
 *
 *   npm run bench:tokens        # BENCH_ROUNDS=5 BENCH_SECONDS=4 BENCH_CONNECTIONS=10 (about two minutes)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:tokens
 */
import { compare, printComparison, type Comparison, type Target } from './lib/harness.js';
import { startBare, startBasegate } from './lib/servers.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

async function main(): Promise<void> {
  const bare = await startBare();
  // Rate limits off: this measures the token work, not the limiter (see bench/limits.bench.ts).
  const basegate = await startBasegate(
    { RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0' },
    {
      // The same Base-Token check in front of a constant: the token work alone, without the rows module's handler.
      routes: (app) => {
        app.get('/api-gateway/api/v2/dtables/:base_uuid/bench-auth-only/', { config: { baseAuth: 'read' } }, async () => ({ hello: 'world' }));
        app.get('/bench-constant', async () => ({ hello: 'world' }));
      },
    },
  );
  try {
    const { seeded, origin } = basegate;
    const targets: Target[] = [
      { name: 'bare', url: bare.url },
      { name: 'GET /api/v2.1/dtable/app-access-token/', url: `${origin}/api/v2.1/dtable/app-access-token/`, headers: { authorization: `Token ${seeded.apiToken}` } },
      { name: 'GET /api-gateway/api/v2/dtables/{uuid}/', url: `${origin}/api-gateway/api/v2/dtables/${seeded.base.uuid}/`, headers: { authorization: `Token ${seeded.baseToken}` } },
      { name: 'Base-Token check + constant (same app)', url: `${origin}/api-gateway/api/v2/dtables/${seeded.base.uuid}/bench-auth-only/`, headers: { authorization: `Token ${seeded.baseToken}` } },
      { name: 'constant, no credential (same app)', url: `${origin}/bench-constant` },
    ];
    for (const target of targets.slice(1)) {
      const probe = await fetch(target.url, { headers: target.headers });
      if (probe.status !== 200) throw new Error(`${target.name}: probe answered ${probe.status} ${await probe.text()}`);
    }
    const results = await compare(targets, { rounds: ROUNDS, seconds: SECONDS, warmupSeconds: 2, connections: CONNECTIONS });
    printComparison(
      `${basegate.container.dialect}, ${CONNECTIONS} connections, ${ROUNDS} rounds x ${SECONDS} s, Node ${process.version}`,
      results,
    );
    const [, exchange, gateway, authOnly] = results;
    const bareCpu = results[0]!.cpuPerRequest.toFixed(1);
    const verdict = (r: Comparison, aim: number) =>
      `${(r.rpsRatio * 100).toFixed(0)}% of bare's req/s (aim ${aim * 100}%: ${r.rpsRatio >= aim ? 'met' : 'missed'}); ` +
      `server CPU ${r.cpuPerRequest.toFixed(1)} µs/request against bare's ${bareCpu} (${(r.cpuRatio * 100).toFixed(0)}%)`;
    console.log(`app-access-token: ${verdict(exchange!, 0.4)}`);
    console.log(`gateway GET: ${verdict(gateway!, 0.5)}`);
    console.log(`Base-Token check alone: ${verdict(authOnly!, 0.5)}`);
    if (results.some((r) => r.failed > 0)) throw new Error('some requests failed; the figures are not valid');
  } finally {
    await basegate.close();
    await bare.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
