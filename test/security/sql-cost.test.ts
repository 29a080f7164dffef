import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, migrateToLatest } from '../../src/db/index.js';
import { SqlThreads } from '../../src/modules/sql/index.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appWithTable, appendRows, gateway, type Gateway } from '../http/rows.fixtures.js';
import { expectSelectsOnThreadSeeWrites, threadsOf } from './sql-threads-support.js';

const orTerms = (n: number) => `SELECT * FROM T WHERE ${Array.from({ length: n }, (_, i) => `Name = 'v${i}'`).join(' OR ')}`;

describe.each(DIALECTS)('SQL cost limits (%s)', (dialect) => {
  describe('defaults', () => {
    let t: TestApp;
    let g: Gateway;
    beforeAll(async () => {
      ({ t, g } = await appWithTable(dialect));
      await appendRows(g, 'T', [{ Name: 'v1' }, { Name: 'v7' }, { Name: 'other' }]);
    });
    afterAll(() => t.close());

    it('refuses the 29,000-term statement by its size before parsing, and /ping/ answers', async () => {
      const [res, ping] = await Promise.all([g.call('POST', 'sql/', { sql: orTerms(29_000) }), t.request({ method: 'GET', url: '/ping/' })]);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ success: false, error_message: expect.stringContaining('SQL_MAX_STATEMENT_BYTES') });
      expect(ping.statusCode).toBe(200);
    });

    it('refuses too many predicate terms and IN values after parsing, answers just below', async () => {
      const terms = await g.call('POST', 'sql/', { sql: orTerms(1001) });
      expect(terms.statusCode).toBe(400);
      expect(terms.json().error_message).toContain('SQL_MAX_PREDICATE_TERMS');
      const within = await g.call('POST', 'sql/', { sql: orTerms(1000), convert_keys: true });
      expect(within.statusCode).toBe(200);
      expect(within.json().results.map((r: { Name: string }) => r.Name).sort()).toEqual(['v1', 'v7']);
      const list = (n: number) => `SELECT * FROM T WHERE Name IN (${Array.from({ length: n }, (_, i) => `'v${i}'`).join(',')})`;
      const tooMany = await g.call('POST', 'sql/', { sql: list(1001) });
      expect(tooMany.statusCode).toBe(400);
      expect(tooMany.json().error_message).toContain('SQL_MAX_IN_VALUES');
      expect((await g.call('POST', 'sql/', { sql: list(1000) })).json().results).toHaveLength(2);
    });
  });

  describe('a statement admitted by a larger size limit is parsed off the main thread', () => {
    let t: TestApp;
    let g: Gateway;
    beforeAll(async () => {
      ({ t, g } = await appWithTable(dialect, { SQL_MAX_STATEMENT_BYTES: '1000000' }));
    });
    afterAll(() => t.close());

    it('keeps answering /ping/ while the 29,000-term statement is parsed, then refuses it by its terms', async () => {
      const threads = threadsOf(t);
      const parse = threads.parse.bind(threads);
      let parsing = false;
      threads.parse = async (...args) => {
        parsing = true;
        try {
          return await parse(...args);
        } finally {
          parsing = false;
        }
      };
      let answered = false;
      const sql = g.call('POST', 'sql/', { sql: orTerms(29_000) }).finally(() => (answered = true));
      let pingsDuringParse = 0;
      // Bounded: the statement is answered within its time limit (SQL_TIMEOUT_MS, 10 s).
      while (!answered) {
        const ping = await t.request({ method: 'GET', url: '/ping/' });
        expect(ping.statusCode).toBe(200);
        if (parsing) pingsDuringParse++;
        // inject answers without I/O; let the event loop take its other turns (the thread's answer) too.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const res = await sql;
      expect(res.statusCode).toBe(400);
      expect(res.json().error_message).toMatch(/SQL_MAX_PREDICATE_TERMS|SQL_TIMEOUT_MS|MB a SQL thread has/);
      // A ping was answered while the parse was under way: the event loop was not blocked by it.
      expect(pingsDuringParse).toBeGreaterThan(0);
    });
  });
});

// Only where PostgreSQL is configured (TEST_DATABASE_URL); SQLite's time limit is tested above.
if (DIALECTS.includes('postgres')) describe('SQL time limit on PostgreSQL', () => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => {
    // 1 ms: any query over a few thousand rows with hundreds of LIKE terms takes longer.
    ({ t, g } = await appWithTable('postgres', { SQL_TIMEOUT_MS: '1', SQL_READER_THREADS: '0' }));
    for (let i = 0; i < 3; i++) await appendRows(g, 'T', Array.from({ length: 1000 }, (_, j) => ({ Name: `row ${i}-${j} ${'lorem ipsum '.repeat(5)}` })));
  });
  afterAll(() => t.close());

  it('cancels a query over SQL_TIMEOUT_MS (statement_timeout) and answers 400 naming the limit', async () => {
    const like = Array.from({ length: 900 }, (_, i) => `Name LIKE '%zz${i}%'`).join(' OR ');
    const res = await g.call('POST', 'sql/', { sql: `SELECT * FROM T WHERE ${like} LIMIT 10000` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, error_message: 'The query took longer than the limit of 1 ms (SQL_TIMEOUT_MS).' });
    // The time limit was local to that query's transaction: the connection still answers.
    expect((await t.request({ method: 'GET', url: '/ping/' })).statusCode).toBe(200);
  });
});

describe('SQL threads on a SQLite file (time limit, recovery)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'basegate-sqlthreads-'));
  const file = path.join(dir, 'db.sqlite3');
  let threads: SqlThreads;
  beforeAll(() => {
    const db = new SQLite(file);
    db.pragma('journal_mode = WAL');
    db.exec('create table t (n integer); insert into t values (1), (2), (3);');
    db.close();
    threads = new SqlThreads({ threads: 2, timeoutMs: 1500, sqliteFile: async () => file });
  });
  // Closing waits for the terminated thread to leave SQLite, which finishes the slow query below
  // first: seconds on an idle machine, far more on a loaded one.
  afterAll(() => threads.close(), 180_000);

  it('runs SELECTs on its read-only connection', async () => {
    expect(await threads.canQuery()).toBe(true);
    // Both threads started (and warm) before the time-limit test below.
    await Promise.all([threads.query('select 1 as one', []), threads.query('select 2 as two', [])]);
    expect(await threads.query('select n from t where n > ? order by n', [1])).toEqual([{ n: 2 }, { n: 3 }]);
    await expect(threads.query('insert into t values (4)', [])).rejects.toThrow(/readonly|read-only|does not return data/i);
  });

  it('answers a query over its limit with a timeout at once, and the next query is still served', async () => {
    // Finite but long (tens of millions of steps): the terminated thread exits when SQLite returns.
    const slow = 'with recursive c(x) as (select 1 union all select x + 1 from c where x < 30000000) select count(*) from c';
    await expect(threads.query(slow, [])).rejects.toMatchObject({ name: 'ThreadTimeoutError', limitMs: 1500 });
    expect(await threads.query('select count(*) as c from t', [])).toEqual([{ c: 3 }]);
  });
});

describe('SELECTs on a SQLite file run on a SQL thread', () => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'basegate-sqlfile-'));
    const database = connect({ databaseUrl: `sqlite:${path.join(dir, 'basegate.sqlite3')}`, dataDir: dir });
    await migrateToLatest(database.db);
    t = await createTestApp('sqlite', {}, { database });
    g = await gateway(t);
    await addTable(g, 'T', [{ column_name: 'Name', column_type: 'text' }]);
    await appendRows(g, 'T', [{ Name: 'a' }, { Name: 'b' }]);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers from the thread and sees the writes committed before it', () => expectSelectsOnThreadSeeWrites(t, g));
});
