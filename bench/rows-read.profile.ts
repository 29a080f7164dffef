/**
 * Profile helper for bench/rows-read.bench.ts: the same seeded base, requests through `inject` in one
 * process, so `node --cpu-prof` shows where a row read's time goes.
 *
 *   BENCH_NO_MAIN=1 npx tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/rows-read.profile.ts [rows|filtered|whole] [requests] [miss]
 *
 * `miss` evicts the base's cached bodies before every request: the cost of the first read after a write.
 */
import { startBasegate } from './lib/servers.js';
import { seedRows } from './rows-read.bench.js';

const which = process.argv[2] ?? 'rows';
const count = Number(process.argv[3] ?? 2000);
const miss = process.argv[4] === 'miss';

const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0', TIME_ZONE: 'Europe/Berlin' });
await seedRows(basegate);
const { app, seeded } = basegate;
const gateway = `/api-gateway/api/v2/dtables/${seeded.base.uuid}`;
const headers = { authorization: `Token ${seeded.baseToken}` };
const request =
  which === 'whole'
    ? () => app.inject({ method: 'GET', url: `${gateway}/`, headers })
    : which === 'filtered'
      ? () => app.inject({ method: 'POST', url: `${gateway}/filtered-rows/?table_name=Bench&limit=100`, headers, payload: { filters: [{ column_name: 'Title', filter_predicate: 'contains', filter_term: 'Row' }] } })
      : () => app.inject({ method: 'GET', url: `${gateway}/rows/?table_name=Bench&limit=100`, headers });
const { id: baseId } = await basegate.container.db.selectFrom('bases').select('id').where('uuid', '=', seeded.base.uuid).executeTakeFirstOrThrow();
const started = performance.now();
const cpuBefore = process.cpuUsage();
for (let i = 0; i < count; i += 10) {
  if (miss) basegate.container.baseData.snapshots.evict(Number(baseId));
  const answers = await Promise.all(Array.from({ length: 10 }, () => (miss ? (basegate.container.baseData.snapshots.evict(Number(baseId)), request()) : request())));
  if (answers.some((a) => a.statusCode !== 200)) throw new Error(answers[0]!.body);
}
const cpu = process.cpuUsage(cpuBefore);
console.log(`${which}${miss ? ' (miss)' : ''}: ${count} requests in ${(performance.now() - started).toFixed(0)} ms; CPU ${((cpu.user + cpu.system) / count).toFixed(0)} µs per request`);
await basegate.close();
