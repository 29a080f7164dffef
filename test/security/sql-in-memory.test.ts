import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { SqlThreads } from '../../src/modules/sql/index.js';
import { createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, type Gateway } from '../http/rows.fixtures.js';
import { expectSelectsOnThreadSeeWrites } from './sql-threads-support.js';

/*
 * A SQLite database in memory (the test suite's default) has no file a SQL thread could open: its
 * SELECTs run on a thread over a copy taken when the query is asked for, under the same time limit.
 * A server cannot be configured with one.
 */

describe('SQL threads on a SQLite database in memory', () => {
  let db: SQLite.Database;
  let threads: SqlThreads;
  beforeAll(() => {
    db = new SQLite(':memory:');
    db.exec('create table t (n integer); insert into t values (1), (2), (3);');
    // 5 s: a thread's start counts against its first job's limit, and under tsx on a loaded machine it took over 1.5 s.
    threads = new SqlThreads({ threads: 2, timeoutMs: 5000, sqliteFile: async () => null, sqliteSnapshot: () => db.serialize() });
  });
  afterAll(async () => {
    await threads.close();
    db.close();
  });

  it('runs SELECTs on a copy of the database taken at the call, read-only', async () => {
    expect(await threads.canQuery()).toBe(true);
    await Promise.all([threads.query('select 1 as one', []), threads.query('select 2 as two', [])]);
    expect(await threads.query('select n from t where n > ? order by n', [1])).toEqual([{ n: 2 }, { n: 3 }]);
    db.exec('insert into t values (4)');
    expect(await threads.query('select count(*) as c from t', [])).toEqual([{ c: 4 }]);
    await expect(threads.query('insert into t values (5)', [])).rejects.toThrow(/readonly|read-only|does not return data/i);
    expect(db.prepare('select count(*) as c from t').get()).toEqual({ c: 4 });
  });

  it('answers a query over its limit with a timeout at once, and the main thread stays free meanwhile', async () => {
    // Minutes of work (3 billion rows): on an idle machine 30 million were counted within the 5 s limit.
    const slow = 'with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000000000) select count(*) from c';
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      await expect(threads.query(slow, [])).rejects.toMatchObject({ name: 'ThreadTimeoutError', limitMs: 5000 });
    } finally {
      clearInterval(timer);
    }
    // The event loop kept turning while the query ran (a blocked loop would count none).
    expect(ticks).toBeGreaterThan(0);
    expect(await threads.query('select count(*) as c from t', [])).toEqual([{ c: 4 }]);
  });
});

describe('SELECTs of the SQL endpoint on a SQLite database in memory run on a SQL thread', () => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
    g = await gateway(t);
    await addTable(g, 'T', [{ column_name: 'Name', column_type: 'text' }]);
    await appendRows(g, 'T', [{ Name: 'a' }, { Name: 'b' }]);
  });
  afterAll(() => t.close());

  it('answers from the thread and sees the writes committed before it', () => expectSelectsOnThreadSeeWrites(t, g));
});

describe('a server cannot use a SQLite database in memory', () => {
  it.each(['sqlite::memory:', 'sqlite:'])('refuses DATABASE_URL=%s', (url) => {
    expect(() => loadConfig({ SECRET_KEY: 'test-secret-key-test-secret-key-0123456789', DATABASE_URL: url }, { persistSecret: false })).toThrow(ConfigError);
    expect(() => loadConfig({ SECRET_KEY: 'test-secret-key-test-secret-key-0123456789', DATABASE_URL: url }, { persistSecret: false })).toThrow(/DATABASE_URL/);
  });

  it('accepts a SQLite file', () => {
    expect(loadConfig({ SECRET_KEY: 'test-secret-key-test-secret-key-0123456789', DATABASE_URL: 'sqlite:/tmp/x.sqlite3' }, { persistSecret: false }).databaseUrl).toBe('sqlite:/tmp/x.sqlite3');
  });
});
