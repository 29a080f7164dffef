import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommitScope, withCommitScope } from '../../src/db/index.js';
import type { ChangeEvent } from '../../src/modules/events/index.js';
import { APPEND_BATCH_LIMITS } from '../../src/modules/rows/append-batches.js';
import { DIALECTS, SharedDatabase, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, refuseEventsNamed, through, type Gateway } from './rows.fixtures.js';

/**
 * Many writers appending to one base at once, through two instances on one database. On PostgreSQL
 * the appends of one base that arrive while one is in flight are sent together as one statement under
 * one revision bump (BaseWriter.batches, group commit); on SQLite each is its own transaction. Either
 * way: every row is stored once, its event is handed to consumers once and in id order while they
 * consume during the writes, the revision only goes up, each writer reads its row right after its
 * write, and one append the database refuses fails alone.
 */
describe.each(DIALECTS)('concurrent appends of one base (%s)', (dialect) => {
  const shared = new SharedDatabase(dialect);
  let first: TestApp;
  let second: TestApp;
  let here: Gateway;
  let there: Gateway;
  const handed: ChangeEvent[] = [];
  const revision = async () =>
    Number((await first.container.db.selectFrom('base_metadata').select('revision').where('base_id', '=', here.base.id).executeTakeFirstOrThrow()).revision);
  /** The stored names `prefix` or `prefix` and a number. */
  const namesStored = async (prefix: string) =>
    (await first.container.db.selectFrom('base_rows').select('data').where('base_id', '=', here.base.id).execute())
      .map((r) => String(((typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>)['0000']))
      .filter((name) => new RegExp(`^${prefix}\\d*$`).test(name));
  const drain = async () => {
    while ((await first.container.dispatcher.runOnce()).handed > 0);
  };

  beforeAll(async () => {
    first = await createTestApp(dialect, {}, { database: await shared.open() });
    second = await createTestApp(dialect, {}, { database: await shared.open(), clock: first.clock });
    first.container.dispatcher.register({ name: 'group-commit-recorder', handle: async (_trx, events) => void handed.push(...events) });
    here = await gateway(first);
    there = through(second, here);
    // Both writers have read the base's metadata now (what a one-statement append works on).
    await appendRows(here, 'Table1', [{ Name: 'warm' }]);
    await appendRows(there, 'Table1', [{ Name: 'warm' }]);
    await drain();
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await shared.dispose();
  });

  it('40 writers on two instances: every row once, its event handed once in id order during the writes, the revision rising, each row read right after its write', async () => {
    handed.length = 0;
    const startRevision = await revision();
    const batchesBefore = { ...first.container.baseData.writer.batches.stats };
    let writing = true;
    const revisions: number[] = [];
    const watch = (async () => {
      while (writing) {
        revisions.push(await revision());
        await first.container.dispatcher.runOnce();
      }
    })();
    const writers = Array.from({ length: 40 }, async (_, i) => {
      const g = i % 2 === 0 ? here : there;
      const [id] = await appendRows(g, 'Table1', [{ Name: `w${i}` }]);
      const one = await g.call('GET', `rows/${id}/?table_name=Table1&convert_keys=true`);
      expect(one.statusCode, one.body).toBe(200);
      expect(one.json().Name).toBe(`w${i}`);
      const page = await g.call('GET', 'rows/?table_name=Table1&limit=1000&convert_keys=true');
      expect(page.statusCode, page.body).toBe(200);
      expect(page.json<{ rows: Array<{ _id: string }> }>().rows.map((r) => r._id)).toContain(id);
      return id!;
    });
    const ids = await Promise.all(writers);
    writing = false;
    await watch;
    await drain();

    const names = await namesStored('w');
    expect(names).toHaveLength(40);
    expect(new Set(names).size).toBe(40);
    const inserts = handed.filter((e) => e.opType === 'insert_row');
    expect(inserts.map((e) => e.rowId).sort()).toEqual([...ids].sort());
    const eventIds = handed.map((e) => e.id);
    expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));
    expect(new Set(eventIds).size).toBe(eventIds.length);
    const logged = await first.container.db.selectFrom('operation_log').select('id').where('base_id', '=', here.base.id).where('op_type', '=', 'insert_row').execute();
    expect(logged.length).toBe(42); // each append its own log entry (the two warm-ups too)
    revisions.push(await revision());
    expect(revisions).toEqual([...revisions].sort((a, b) => a - b));
    expect(revisions.at(-1)!).toBeGreaterThan(startRevision);
    if (dialect === 'postgres') {
      // Appends that arrived while one was in flight went together: fewer statements than appends.
      const stats = first.container.baseData.writer.batches.stats;
      expect(stats.largest).toBeGreaterThan(1);
      expect(stats.appends - batchesBefore.appends).toBeGreaterThan(stats.statements - batchesBefore.statements);
    } else {
      expect(revisions.at(-1)!).toBe(startRevision + 40);
    }
  });

  it('an append the database refuses fails alone; the others sent with it are written once each', async () => {
    const allowEvents = await refuseEventsNamed(first.container.db, dialect);
    try {
      const rows = first.container.baseData.rows;
      const actor = { user: 'u@auth.local', app: null };
      const names = Array.from({ length: 16 }, (_, i) => (i === 6 ? 'refused' : `r${i}`));
      const batches = first.container.baseData.writer.batches;
      const failedBefore = batches.stats.failedShared;
      const appending = () => Promise.allSettled(names.map((name) => rows.append(here.base, actor, { table_name: 'Table1', rows: [{ Name: name }] })));
      // PostgreSQL: the first statement waits for the base's row lock, held here, until all 16 appends
      // are handed to the batches, so some go in a shared statement, which the refused one makes fail.
      const waited =
        dialect === 'postgres'
          ? await first.container.db.transaction().execute(async (trx) => {
              await sql`SELECT 1 FROM base_metadata WHERE base_id = ${here.base.id} FOR UPDATE`.execute(trx);
              const all = appending();
              for (let i = 0; i < 1000 && batches.unsettled(here.base.id) < 16; i++) await new Promise((resolve) => setTimeout(resolve, 5));
              expect(batches.unsettled(here.base.id)).toBe(16);
              return { all };
            })
          : { all: appending() };
      const settled = await waited.all;
      if (dialect === 'postgres') expect(batches.stats.failedShared).toBe(failedBefore + 1);
      for (const [i, outcome] of settled.entries()) {
        if (names[i] === 'refused') expect(outcome.status === 'rejected' && String(outcome.reason)).toMatch(/refused by the test/);
        else expect(outcome.status, String((outcome as PromiseRejectedResult).reason)).toBe('fulfilled');
      }
      const stored = await namesStored('r');
      expect(stored.sort()).toEqual(names.filter((n) => n !== 'refused').sort());
      expect(await namesStored('refused')).toEqual([]);
      const events = await first.container.db.selectFrom('events').select('row_name').where('base_id', '=', here.base.id).where('row_name', 'like', 'r%').execute();
      expect(events.map((e) => e.row_name).sort()).toEqual(names.filter((n) => n !== 'refused').sort());
    } finally {
      await allowEvents();
    }
  });

  it('appends of two tables and two authors sent together keep each its own table, author, log entry and events; with two in flight, two statements wait for the base inside PostgreSQL, the rest in the batches', async () => {
    const other = await addTable(here, 'Other', [{ column_name: 'Name', column_type: 'text' }]);
    // The metadata moved (a new table): the writers read it again with one append each.
    await appendRows(here, 'Other', [{ Name: 'warm' }]);
    await appendRows(there, 'Other', [{ Name: 'warm' }]);
    const rows = first.container.baseData.rows;
    const batches = first.container.baseData.writer.batches;
    const authors = [
      { user: 'a@auth.local', app: null },
      { user: 'b@auth.local', app: 'robot' },
    ];
    const plan = Array.from({ length: 8 }, (_, i) => ({ name: `m${i}`, table: i % 2 === 0 ? 'Table1' : 'Other', actor: authors[Math.floor(i / 2) % 2]! }));
    const append = (p: (typeof plan)[number]) => rows.append(here.base, p.actor, { table_name: p.table, rows: [{ Name: p.name }, { Name: `${p.name}b` }] });
    const statementsBefore = batches.stats.statements;
    let answers: Awaited<ReturnType<typeof append>>[];
    if (dialect === 'postgres') {
      batches.limits.inFlight = 2;
      const { db } = first.container;
      answers = await db.transaction().execute(async (trx) => {
        await sql`SELECT 1 FROM base_metadata WHERE base_id = ${here.base.id} FOR UPDATE`.execute(trx);
        const holder = Number((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid);
        // Statements waiting for the holder, or for one that waits for it (the second waits behind the first).
        const waiting = async () =>
          Number(
            (
              await sql<{ n: number }>`
                WITH first AS (SELECT pid FROM pg_stat_activity WHERE ${holder} = ANY(pg_blocking_pids(pid)))
                SELECT count(*)::int AS n FROM pg_stat_activity AS a
                 WHERE a.pid IN (SELECT pid FROM first) OR pg_blocking_pids(a.pid) && ARRAY(SELECT pid FROM first)`.execute(db)
            ).rows[0]!.n,
          );
        const until = async (done: () => Promise<boolean>) => {
          for (let i = 0; i < 1000 && !(await done()); i++) await new Promise((resolve) => setTimeout(resolve, 5));
        };
        // Two appends go out (in one statement or two); the next six wait until as many wait as are in
        // flight, then go as a second statement, which waits for the base inside PostgreSQL too.
        const wave = plan.slice(0, 2).map(append);
        await until(async () => batches.unsettled(here.base.id) === 2 && (await waiting()) >= 1);
        wave.push(...plan.slice(2).map(append));
        await until(async () => batches.unsettled(here.base.id) === plan.length && (await waiting()) === 2);
        expect(batches.unsettled(here.base.id)).toBe(plan.length);
        expect(await waiting()).toBe(2);
        return { wave };
      })
        .then(({ wave }) => Promise.all(wave))
        .finally(() => (batches.limits.inFlight = APPEND_BATCH_LIMITS.inFlight));
      expect(batches.stats.statements - statementsBefore).toBeLessThanOrEqual(3);
    } else {
      answers = await Promise.all(plan.map(append));
    }

    const { db } = first.container;
    for (const [i, p] of plan.entries()) {
      const ids = answers[i]!.row_ids.map((r) => r._id);
      const stored = await db.selectFrom('base_rows').select(['row_id', 'table_id', 'creator', 'last_modifier', 'id']).where('base_id', '=', here.base.id).where('row_id', 'in', ids).orderBy('id').execute();
      expect(stored.map((r) => [r.row_id, r.table_id, r.creator, r.last_modifier])).toEqual(
        ids.map((id) => [id, p.table === 'Other' ? other._id : stored[0]!.table_id, p.actor.user, p.actor.user]),
      );
      if (p.table === 'Other') expect(stored[0]!.table_id).toBe(other._id);
      else expect(stored[0]!.table_id).not.toBe(other._id);
      const events = await db.selectFrom('events').select(['row_id', 'row_name', 'table_id', 'table_name', 'op_user', 'op_app', 'write_id']).where('base_id', '=', here.base.id).where('row_id', 'in', ids).orderBy('id').execute();
      expect(events.map((e) => [e.row_id, e.row_name, e.table_id, e.table_name, e.op_user, e.op_app])).toEqual(
        ids.map((id, j) => [id, j === 0 ? p.name : `${p.name}b`, stored[0]!.table_id, p.table, p.actor.user, p.actor.app]),
      );
      expect(new Set(events.map((e) => e.write_id)).size).toBe(1);
      const logged = await db.selectFrom('operation_log').select(['id', 'op_user', 'op_app', 'table_id', 'row_count', 'op_type', 'changes']).where('write_id', '=', events[0]!.write_id!).execute();
      expect(logged.map(({ id: _, changes: __, ...rest }) => rest)).toEqual([{ op_user: p.actor.user, op_app: p.actor.app, table_id: stored[0]!.table_id, row_count: 2, op_type: 'insert_rows' }]);
      // The log entry of an append of new rows names this write's rows, and only them (by id and name;
      // no row-index entries: such an append is found by its rows' creation, docs/history.md).
      expect(JSON.parse(logged[0]!.changes)).toMatchObject({ ids, names: [p.name, `${p.name}b`] });
      expect(await db.selectFrom('operation_log_rows').select('row_key').where('op_id', '=', logged[0]!.id).execute()).toEqual([]);
    }
    const writeIds = await db.selectFrom('events').select('write_id').distinct().where('base_id', '=', here.base.id).where('row_name', 'like', 'm%').execute();
    expect(writeIds).toHaveLength(plan.length);
  });

  it('each audited append commits its own request’s appendix (it is not shared into another’s statement)', async () => {
    const rows = first.container.baseData.rows;
    const scopes = Array.from({ length: 10 }, () => new CommitScope());
    const ran = new Map<CommitScope, number>();
    const append = (scope: CommitScope, i: number) => {
      scope.appendix = { write: async () => void ran.set(scope, (ran.get(scope) ?? 0) + 1) };
      return withCommitScope(scope, () => rows.append(here.base, { user: 'u@auth.local', app: null }, { table_name: 'Table1', rows: [{ Name: `a${i}` }] }));
    };
    // Unaudited appends around them, which the batches may group.
    const plain = Array.from({ length: 10 }, (_, i) => rows.append(here.base, { user: 'u@auth.local', app: null }, { table_name: 'Table1', rows: [{ Name: `p${i}` }] }));
    await Promise.all([...scopes.map(append), ...plain]);
    for (const scope of scopes) {
      expect(ran.get(scope)).toBe(1);
      expect(scope.written).toBe(true);
    }
    expect((await namesStored('a')).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `a${i}`).sort());
  });

  it('appends prepared on a version another instance moved are redone, each written once', async () => {
    const meta = await first.container.db.selectFrom('base_metadata').select(['version', 'data']).where('base_id', '=', here.base.id).executeTakeFirstOrThrow();
    const data = JSON.parse(meta.data) as { tables: Array<{ columns: Array<{ key: string; name: string }> }> };
    data.tables[0]!.columns[0]!.name = 'Title';
    await first.container.db.updateTable('base_metadata').set({ version: Number(meta.version) + 1, data: JSON.stringify(data) }).where('base_id', '=', here.base.id).execute();
    const redone = first.container.baseData.writer.oneStatementStats.redone;
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => here.call('POST', 'rows/', { table_name: 'Table1', rows: [{ Title: `s${i}` }] })));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    expect((await namesStored('s')).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `s${i}`).sort());
    if (dialect === 'postgres') expect(first.container.baseData.writer.oneStatementStats.redone).toBeGreaterThan(redone);
  });
});
