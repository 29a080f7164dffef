import { loadConfig } from '../src/config/index.js';
import { createContainer } from '../src/container.js';
const config = loadConfig({ SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789', DATA_DIR: '/tmp/b/scratch', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/bg_big10m' }, { persistSecret: false });
const c = createContainer(config);
const base = await c.db.selectFrom('bases').select(['id', 'uuid']).orderBy('id', 'desc').executeTakeFirstOrThrow();
const ref = { id: Number(base.id), uuid: base.uuid };
const rows = c.baseData.rows;
const width = 1000;
for (const [label, w] of [['0.01%', 1000], ['1%', 100000]] as const) {
  for (let i = 0; i < 6; i++) {
    const t = Math.floor(((i * 7919) % 97) / 97 * (10_000_000 - w));
    c.baseData.snapshots.evict(ref.id);
    const walked = rows.walkedPages;
    const start = process.hrtime.bigint();
    const json = await rows.listJson(ref, { table_name: 'Big', limit: 100 } as never, {}, { filters: [
      { column_name: 'Amount', filter_predicate: 'greater_or_equal', filter_term: t },
      { column_name: 'Amount', filter_predicate: 'less', filter_term: t + w },
    ] });
    console.log(label, i, (Number(process.hrtime.bigint() - start) / 1e6).toFixed(1), 'ms', 'walked', rows.walkedPages - walked, 'rows', (JSON.parse(json).rows as unknown[]).length);
  }
}
await c.close();
