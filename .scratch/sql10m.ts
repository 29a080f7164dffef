import { loadConfig } from '../src/config/index.js';
import { createContainer } from '../src/container.js';
const config = loadConfig({ SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789', DATA_DIR: '/tmp/b/scratch', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/bg_big10m' }, { persistSecret: false });
const c = createContainer(config);
const base = await c.db.selectFrom('bases').select(['id', 'uuid']).orderBy('id', 'desc').executeTakeFirstOrThrow();
const ref = { id: Number(base.id), uuid: base.uuid };
await c.baseData.indexes.idle();
for (const [i, statement] of ['SELECT * FROM Big WHERE Amount > 9999950 LIMIT 100', 'SELECT * FROM Big WHERE Amount > 9999949 LIMIT 100', 'SELECT * FROM Big WHERE Amount > 9999948 LIMIT 100', 'SELECT Kind, COUNT(*) FROM Big GROUP BY Kind', 'SELECT Kind, COUNT(*) FROM Big GROUP BY Kind'].entries()) {
  const start = process.hrtime.bigint();
  const r = await c.sql.execute({ base: ref, permission: 'rw', actor: { email: 'x@example.com' } as never }, { sql: statement, convert_keys: true } as never);
  console.log(i, (Number(process.hrtime.bigint() - start) / 1e6).toFixed(1), 'ms', JSON.stringify(r).length);
}
await c.close();
