/**
 * Profile helper for bench/rows-read.bench.ts: the same seeded base, requests through `inject` in one
 * process, so `node --cpu-prof` shows where a row read's time goes.
 *
 *   BENCH_NO_MAIN=1 npx tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/rows-read.profile.ts [rows|filtered|whole] [requests] [miss|write]
 *
 * `miss` evicts the base's cached bodies before every request: the cost of the first read after a write
 * (misses run one at a time, hits 10 at a time).
 * `write` writes one cell (a different row each time) through the rows service before every request,
 * and reports the CPU of the writes alone first, so the reads' share is the difference.
 */
import { startBasegate } from './lib/servers.js';
import { seedRows } from './rows-read.bench.js';

const which = process.argv[2] ?? 'rows';
const count = Number(process.argv[3] ?? 2000);
const mode = process.argv[4];
const miss = mode === 'miss';

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
const base = { id: Number(baseId), uuid: seeded.base.uuid };
const { rows: rowIds } = await basegate.container.db.selectFrom('base_rows').select('row_id as rows').where('base_id', '=', base.id).where('table_id', '=', (await basegate.container.baseData.writer.read(base)).tables.find((t) => t.name === 'Bench')!._id).execute().then((r) => ({ rows: r.map((x) => x.rows) }));
let written = 0;
const write = () => basegate.container.baseData.rows.update(base, { user: 'bench@auth.local', app: null }, { table_name: 'Bench', row_id: rowIds[written++ % 100]!, row: { Amount: written } });
if (mode === 'write') {
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < count; i++) await write();
  const cpu = process.cpuUsage(cpuBefore);
  console.log(`one-cell writes alone: CPU ${((cpu.user + cpu.system) / count).toFixed(0)} µs per write`);
}
const started = performance.now();
const cpuBefore = process.cpuUsage();
for (let i = 0; i < count; i += miss || mode === 'write' ? 1 : 10) {
  const one = async () => {
    if (mode === 'write') await write();
    else if (miss) basegate.container.baseData.snapshots.evict(Number(baseId));
    return request();
  };
  // Misses one at a time: concurrent ones would find the page a sibling just built (a POST's body is read later).
  const answers = miss || mode === 'write' ? [await one()] : await Promise.all(Array.from({ length: 10 }, one));
  if (answers.some((a) => a.statusCode !== 200)) throw new Error(answers[0]!.body);
}
const cpu = process.cpuUsage(cpuBefore);
console.log(`${which}${mode ? ` (${mode})` : ''}: ${count} requests in ${(performance.now() - started).toFixed(0)} ms; CPU ${((cpu.user + cpu.system) / count).toFixed(0)} µs per request`);
await basegate.close();
