/**
 * Profile helper for the append case of bench/rows.bench.ts: 1,000-row appends through `inject` in one
 * process (no HTTP client), so `node --cpu-prof` shows where an append's time goes.
 *
 *   npx tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/rows-append.profile.ts [appends]
 *
 * With BENCH_DATABASE_URL the base lives on PostgreSQL.
 */
import { startBasegate } from './lib/servers.js';

const count = Number(process.argv[2] ?? 30);
const basegate = await startBasegate({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0' });
const { app, seeded } = basegate;
const gateway = `/api-gateway/api/v2/dtables/${seeded.base.uuid}`;
const headers = { authorization: `Token ${seeded.baseToken}` };
const created = await app.inject({
  method: 'POST',
  url: `${gateway}/tables/`,
  headers,
  payload: {
    table_name: 'Bench',
    columns: [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Amount', column_type: 'number' },
      { column_name: 'Done', column_type: 'checkbox' },
      { column_name: 'Due', column_type: 'date' },
      { column_name: 'Tag', column_type: 'single-select', column_data: { options: [{ name: 'a' }, { name: 'b' }] } },
    ],
  },
});
if (created.statusCode !== 200) throw new Error(created.body);
const rows = (salt: number) =>
  Array.from({ length: 1000 }, (_, i) => ({ Name: `row ${salt} ${i}`, Amount: i * 1.5, Done: i % 2 === 0, Due: `2026-01-${String((i % 28) + 1).padStart(2, '0')}`, Tag: i % 3 ? 'a' : 'b' }));
let cpuTotal = 0;
const started = performance.now();
for (let i = 0; i < count; i++) {
  const payload = JSON.stringify({ table_name: 'Bench', rows: rows(i) });
  const c0 = process.cpuUsage();
  const res = await app.inject({ method: 'POST', url: `${gateway}/rows/`, headers: { ...headers, 'content-type': 'application/json' }, payload });
  const c = process.cpuUsage(c0);
  cpuTotal += (c.user + c.system) / 1000;
  if (res.statusCode !== 200) throw new Error(res.body);
}
console.log(`${count} appends of 1,000 rows in ${(performance.now() - started).toFixed(0)} ms; CPU ${(cpuTotal / count).toFixed(1)} ms per append (request only)`);
await basegate.close();
