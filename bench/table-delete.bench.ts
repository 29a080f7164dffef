/**
 * Deleting a table into the trash at two sizes, per dialect, in one run: each round seeds a table of
 * BENCH_SMALL rows (1,000) and one of BENCH_LARGE rows (100,000) by SQL and deletes both through the API
 * (`DELETE …/tables/`), alternating the order. Reports the median delete time at each size and the
 * large/small ratio (1.0 = the delete does not grow with the table), then the restore and the purge of
 * one large table for reference.
 *
 *   npx tsx bench/table-delete.bench.ts
 *
 * Knobs: BENCH_SMALL (1000), BENCH_LARGE (100000), BENCH_ITERATIONS (5), BENCH_DIALECTS
 * (sqlite,postgres; PostgreSQL needs TEST_DATABASE_URL).
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { DialectName } from '../src/db/index.js';
import { createTestApp, type TestApp } from '../test/helpers/index.js';
import { addTable, gateway, type Gateway } from '../test/http/rows.fixtures.js';
import { median } from './lib/harness.js';

const SMALL = Number(process.env.BENCH_SMALL ?? 1000);
const LARGE = Number(process.env.BENCH_LARGE ?? 100_000);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 5);
const DIALECTS = (process.env.BENCH_DIALECTS ?? 'sqlite,postgres').split(',') as DialectName[];
const UNLIMITED = { RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' };

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

async function ok(res: Promise<{ statusCode: number; body: string }>): Promise<{ json(): any }> {
  const r = await res;
  if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${r.body}`);
  return r as unknown as { json(): any };
}

/** A table `name` with `rows` rows inserted by SQL (one statement per 5,000). */
async function seed(t: TestApp, g: Gateway, name: string, rows: number): Promise<void> {
  await addTable(g, name, [{ column_name: 'Name', column_type: 'text' }, { column_name: 'Size', column_type: 'number' }]);
  const meta = (await ok(g.call('GET', 'metadata/'))).json().metadata as { tables: Array<{ _id: string; name: string; columns: Array<{ key: string; name: string }> }> };
  const table = meta.tables.find((x) => x.name === name)!;
  const [nameKey, sizeKey] = ['Name', 'Size'].map((n) => table.columns.find((c) => c.name === n)!.key);
  for (let i = 0; i < rows; i += 5000) {
    const part = Array.from({ length: Math.min(5000, rows - i) }, (_, j) => {
      const n = i + j;
      return sql`(${g.base.id}, ${table._id}, ${`${name}_${n}`}, ${JSON.stringify({ [nameKey!]: `row ${n}`, [sizeKey!]: n })}, 0, 0, 'bench', 'bench')`;
    });
    await sql`insert into base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier) values ${sql.join(part)}`.execute(t.container.db);
  }
}

async function run(dialect: DialectName) {
  const t = await createTestApp(dialect, UNLIMITED);
  try {
    const g = await gateway(t);
    const times: Record<string, number[]> = { small: [], large: [] };
    for (let i = 0; i < ITERATIONS + 1; i++) {
      // Fresh tables each round, seeded by SQL (no change events for the dispatcher to work through meanwhile).
      await seed(t, g, `Small${i}`, SMALL);
      await seed(t, g, `Large${i}`, LARGE);
      for (const [size, name] of i % 2 === 0 ? [['small', `Small${i}`], ['large', `Large${i}`]] : [['large', `Large${i}`], ['small', `Small${i}`]]) {
        const del = await timed(() => ok(g.call('DELETE', 'tables/', { table_name: name })));
        if (i > 0) times[size!]!.push(del); // round 0 warms up
      }
    }
    const entry = (await ok(g.call('GET', 'trash/tables/?per_page=100'))).json().tables.find((x: { table_name: string }) => x.table_name === `Large${ITERATIONS}`);
    const restore = await timed(() => ok(g.call('PUT', `trash/tables/${entry.id}/`, {})));
    await ok(g.call('DELETE', 'tables/', { table_name: `Large${ITERATIONS}` }));
    const again = (await ok(g.call('GET', 'trash/tables/?per_page=100'))).json().tables.find((x: { table_name: string }) => x.table_name === `Large${ITERATIONS}`);
    const purge = await timed(() => ok(g.call('DELETE', `trash/tables/${again.id}/`)));
    const small = median(times.small!);
    const large = median(times.large!);
    console.log(
      `${dialect}: delete ${SMALL} rows ${small.toFixed(1)} ms, ${LARGE} rows ${large.toFixed(1)} ms, ratio ${(large / small).toFixed(2)}; ` +
        `restore of ${LARGE} rows (insert events included) ${restore.toFixed(0)} ms; purge of ${LARGE} rows ${purge.toFixed(0)} ms`,
    );
  } finally {
    await t.close();
  }
}

for (const dialect of DIALECTS) await run(dialect);
