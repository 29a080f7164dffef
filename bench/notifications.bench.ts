/**
 * Notification rules, two measurements on a SQLite file and, when a PostgreSQL URL is given, on PostgreSQL:
 *
 * 1. Engine cost per change (default settings, de-duplication on) with 100, 1,000 and 10,000 rules in the system, spread over many bases
 *    (10 rules per base). The changed table always has the same 10 rules (each fires, one recipient),
 *    so a flat cost shows that it depends on the rules of the changed table, not on the total. Measured
 *    by handing the same committed modify_row events to the notification consumer: in batches as the
 *    dispatcher does (500 per transaction) and one event per transaction.
 * 2. A deadline scan over a 100,000-row table: time and peak heap of one rule's run when 1 % and 10 % of
 *    the rows are in the window, next to the peak heap of merely loading that table into memory.
 *
 *   node --expose-gc --import tsx bench/notifications.bench.ts
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --expose-gc --import tsx bench/notifications.bench.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/index.js';
import { createContainer, type Container } from '../src/container.js';
import { migrateToLatest, type DialectName } from '../src/db/index.js';
import { eventsAfter } from '../src/modules/events/index.js';
import type { AccountUser } from '../src/modules/accounts/index.js';
import { defaultMetadataJson } from '../src/modules/rows/index.js';
import { benchDatabase } from './lib/databases.js';

const PG_URL = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? null;
const RULE_TOTALS = (process.env.BENCH_RULES ?? '100,1000,10000').split(',').map(Number);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 200);
const SCAN_ROWS = Number(process.env.BENCH_SCAN_ROWS ?? 100_000);
const RULES_PER_BASE = 10;
const ROUNDS = 2;

const gc = (globalThis as { gc?: () => void }).gc;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function database(dialect: DialectName, dir: string) {
  return benchDatabase(dialect, dir, { pgUrl: PG_URL, poolSize: 5 });
}

function ruleRow(baseId: number, uuid: string, creatorId: number, now: number, i: number) {
  const trigger = { rule_name: `filler ${i}`, table_id: '0000', view_id: '0000', condition: 'rows_modified' };
  return {
    base_id: baseId,
    dtable_uuid: uuid,
    table_id: '0000',
    run_condition: 'per_update',
    condition: 'rows_modified',
    trigger: JSON.stringify(trigger),
    action: JSON.stringify({ type: 'notify', users: [], default_msg: 'x' }),
    creator_id: creatorId,
    ctime: now,
    updated_at: now,
    last_trigger_time: null,
    invalid_reason: null,
    next_run_at: null,
  };
}

/** Filler bases (each with the default metadata) and 10 rules on each, inserted in bulk. */
async function addFillerRules(c: Container, owner: AccountUser, workspaceId: number, from: number, count: number): Promise<void> {
  const now = c.clock.now();
  for (let i = from; i < from + count; i += RULES_PER_BASE) {
    const uuid = crypto.randomUUID();
    const { id } = await c.db
      .insertInto('bases')
      .values({ uuid, workspace_id: workspaceId, name: `filler-${i}`, creator_id: owner.id, modifier_id: owner.id, created_at: now, updated_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    await c.db.insertInto('base_metadata').values({ base_id: Number(id), version: 1, data: defaultMetadataJson() }).execute();
    const rules = Array.from({ length: RULES_PER_BASE }, (_, k) => ruleRow(Number(id), uuid, owner.id, now, i + k));
    await c.db.insertInto('notification_rules').values(rules).execute();
  }
}

async function engineCase(c: Container, owner: AccountUser): Promise<Array<{ rules: number; batchedUs: number; singleUs: number }>> {
  const hot = await c.bases.create(owner, { name: 'hot' });
  const target = { workspaceId: String(hot.workspace_id), baseName: 'hot' };
  for (let i = 0; i < RULES_PER_BASE; i++) {
    await c.notifications.rules.create(owner, target, {
      run_condition: 'per_update',
      trigger: { rule_name: `hot ${i}`, table_id: '0000', view_id: '0000', condition: 'rows_modified' },
      action: { type: 'notify', users: [owner.virtualId], default_msg: '{Name} changed' },
    });
  }
  const baseRef = { id: hot.id, uuid: hot.uuid };
  const actor = { user: owner.virtualId, app: null };
  const appended = await c.baseData.rows.append(baseRef, actor, { table_name: 'Table1', rows: Array.from({ length: CHANGES }, (_, i) => ({ Name: `row ${i}` })) });
  const lastInsert = Number((await c.db.selectFrom('events').select((eb) => eb.fn.max('id').as('m')).executeTakeFirstOrThrow()).m);
  await c.baseData.rows.update(baseRef, actor, {
    table_name: 'Table1',
    updates: appended.row_ids.map((r, i) => ({ row_id: r._id, row: { Name: `changed ${i}` } })),
  });
  const events = await eventsAfter(c.db, lastInsert, CHANGES);
  if (events.length !== CHANGES || events.some((e) => e.opType !== 'modify_row')) throw new Error('unexpected events');

  const results: Array<{ rules: number; batchedUs: number; singleUs: number }> = [];
  let total = RULES_PER_BASE;
  for (const wanted of RULE_TOTALS) {
    if (wanted > total) {
      await addFillerRules(c, owner, hot.workspace_id, total, wanted - total);
      total = wanted;
    }
    const before = await c.db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const batched: number[] = [];
    const single: number[] = [];
    // The same events are handed over again each pass; forgetting the de-duplication marks (outside the
    // timing) lets every pass fire and record them as a first change would.
    const forget = () => c.db.deleteFrom('notification_rule_marks').execute();
    for (let round = -1; round < ROUNDS; round++) {
      await forget();
      let started = performance.now();
      for (let i = 0; i < events.length; i += 500) {
        await c.db.transaction().execute((trx) => c.notifications.consumer.handle(trx, events.slice(i, i + 500)));
      }
      const batchedUs = ((performance.now() - started) * 1000) / events.length;
      await forget();
      started = performance.now();
      for (const event of events) await c.db.transaction().execute((trx) => c.notifications.consumer.handle(trx, [event]));
      const singleUs = ((performance.now() - started) * 1000) / events.length;
      if (round >= 0) {
        batched.push(batchedUs);
        single.push(singleUs);
      }
    }
    const after = await c.db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const expected = (ROUNDS + 1) * 2 * CHANGES * RULES_PER_BASE;
    if (Number(after.n) - Number(before.n) !== expected) throw new Error(`expected ${expected} notifications, got ${Number(after.n) - Number(before.n)}`);
    results.push({ rules: total, batchedUs: median(batched), singleUs: median(single) });
  }
  return results;
}

/** Runs `work` while sampling the heap every 2 ms; returns its time and the peak heap above the start. */
async function measure<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; peakHeapMb: number }> {
  gc?.();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 2);
  const started = performance.now();
  try {
    const value = await work();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    return { value, ms: performance.now() - started, peakHeapMb: (peak - baseline) / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

async function scanCase(c: Container, owner: AccountUser) {
  const base = await c.bases.create(owner, { name: 'deadlines' });
  const meta = JSON.parse(defaultMetadataJson()) as { version: number; tables: Array<{ columns: unknown[] }> };
  meta.tables[0]!.columns.push(
    { key: 'd001', name: 'Deadline', type: 'date', width: 200, editable: true, resizable: true, draggable: true, data: { format: 'YYYY-MM-DD' } },
    { key: 'd010', name: 'Due', type: 'date', width: 200, editable: true, resizable: true, draggable: true, data: { format: 'YYYY-MM-DD' } },
  );
  await c.db.updateTable('base_metadata').set({ data: JSON.stringify(meta), version: 2 }).where('base_id', '=', base.id).execute();
  // "today" is 2026-01-05 (the clock below); in-window dates are today … today+3.
  const inWindow = (i: number) => `2026-01-0${5 + (i % 4)}`;
  const far = (i: number) => `2027-0${1 + (i % 9)}-1${i % 10}`;
  const now = Date.UTC(2026, 0, 5, 9);
  for (let i = 0; i < SCAN_ROWS; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, SCAN_ROWS - i) }, (_, k) => {
      const n = i + k;
      return {
        base_id: base.id,
        table_id: '0000',
        row_id: randomBytes(16).toString('base64url').slice(0, 22),
        data: JSON.stringify({ '0000': `row ${n}`, d001: n % 100 === 0 ? inWindow(n) : far(n), d010: n % 10 === 0 ? inWindow(n) : far(n) }),
        ctime: now,
        mtime: now,
        creator: owner.virtualId,
        last_modifier: owner.virtualId,
      };
    });
    await c.db.insertInto('base_rows').values(rows).execute();
  }
  const target = { workspaceId: String(base.workspace_id), baseName: 'deadlines' };
  const rule = (name: string, column: string) =>
    c.notifications.rules.create(owner, target, {
      run_condition: 'per_day',
      trigger: { rule_name: name, table_id: '0000', view_id: '0000', condition: 'near_deadline', date_column_name: column, alarm_days: 3, notify_hour: 9 },
      action: { type: 'notify', users: [owner.virtualId], default_msg: '{Name} is due on {Deadline}' },
    });
  const onePercent = await rule('1%', 'Deadline');
  const tenPercent = await rule('10%', 'Due');
  const due = (id: number) => c.db.updateTable('notification_rules').set({ next_run_at: now }).where('id', '=', id).execute();
  const idle = () => c.db.updateTable('notification_rules').set({ next_run_at: now + 86_400_000 }).execute();

  const loadAll = await measure(async () => {
    const rows = await c.db.selectFrom('base_rows').selectAll().where('base_id', '=', base.id).where('table_id', '=', '0000').execute();
    return rows.map((r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data)).length;
  });
  const out = [];
  for (const [label, r] of [['1% in window', onePercent], ['10% in window', tenPercent]] as const) {
    await idle();
    await due(r.id);
    const run = await measure(() => c.notifications.deadlines.run(now));
    out.push({ label, ms: run.ms, peakHeapMb: run.peakHeapMb, matched: run.value.rows, notifications: run.value.notifications });
  }
  return { loadAll: { ms: loadAll.ms, peakHeapMb: loadAll.peakHeapMb, rows: loadAll.value }, scans: out };
}

async function runDialect(dialect: DialectName) {
  const dir = mkdtempSync(path.join(tmpdir(), 'basegate-bench-'));
  const db = await database(dialect, dir);
  const config = loadConfig(
    { SECRET_KEY: 'bench-secret-key-bench-secret-key-0123456789', DATA_DIR: dir, LOG_LEVEL: 'silent' },
    { persistSecret: false },
  );
  const c = createContainer(config, { database: db.handle, clock: { now: () => Date.UTC(2026, 0, 5, 9) } });
  try {
    await migrateToLatest(c.db);
    const owner = await c.accounts.createUser({ email: 'bench@example.com', password: 'password-123', name: 'Bench' });
    const engine = await engineCase(c, owner);
    console.log(`\n[${dialect}] engine cost per change (${CHANGES} modify_row events, 10 rules on the changed table, each firing)`);
    console.log('rules in system   batched µs/change   vs first   one-per-tx µs/change   vs first');
    for (const r of engine) {
      console.log(
        `${String(r.rules).padStart(15)}   ${r.batchedUs.toFixed(0).padStart(17)}   ${(r.batchedUs / engine[0]!.batchedUs).toFixed(2).padStart(7)}x   ${r.singleUs.toFixed(0).padStart(20)}   ${(r.singleUs / engine[0]!.singleUs).toFixed(2).padStart(7)}x`,
      );
    }
    const scan = await scanCase(c, owner);
    console.log(`\n[${dialect}] deadline scan over a ${SCAN_ROWS.toLocaleString('en')}-row table (peak heap above the start${gc ? '' : '; run with --expose-gc for steadier figures'})`);
    console.log(`load the whole table (reference)   ${scan.loadAll.ms.toFixed(0).padStart(6)} ms   ${scan.loadAll.peakHeapMb.toFixed(1).padStart(6)} MB   ${scan.loadAll.rows} rows`);
    for (const s of scan.scans) {
      console.log(`scan, ${s.label.padEnd(28)} ${s.ms.toFixed(0).padStart(6)} ms   ${s.peakHeapMb.toFixed(1).padStart(6)} MB   ${s.matched} rows → ${s.notifications} notifications`);
    }
  } finally {
    await c.close();
    await db.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

await runDialect('sqlite');
if (PG_URL) await runDialect('postgres');
