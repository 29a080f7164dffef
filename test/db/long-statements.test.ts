import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, longStatement, type DbHandle } from '../../src/db/index.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * Issue 34: a row index of a 10,000,000-row table takes minutes to build. Connections have a statement
 * timeout on the server and a read timeout on the client (2 s longer), which drops the connection; a
 * statement marked long (db/long-statements.ts) waits as long as the server's timeout on its connection
 * allows, while an unmarked one still meets the client's read timeout.
 */
describe.each(DIALECTS.filter((d) => d === 'postgres'))('long statements (%s)', () => {
  let handle: DbHandle;
  beforeAll(() => {
    // Statement timeout 1 s: the client's read timeout is 3 s.
    handle = connect({ databaseUrl: process.env.TEST_DATABASE_URL!, dataDir: '/nonexistent', poolSize: 2, statementTimeoutMs: 1_000 });
  });
  afterAll(() => handle?.close());

  it('a statement marked long runs past the client read timeout when its connection allows it', async () => {
    const slept = await handle.db.connection().execute(async (conn) => {
      await sql`set statement_timeout = 10000`.execute(conn);
      try {
        return (await longStatement('select 1 as slept from pg_sleep(3.5)').execute(conn)).rows;
      } finally {
        await sql`reset statement_timeout`.execute(conn);
      }
    });
    expect(slept).toEqual([{ slept: 1 }]);
  }, 20_000);

  it('an unmarked statement still meets the client read timeout', async () => {
    const failed = await handle.db
      .connection()
      .execute(async (conn) => {
        await sql`set statement_timeout = 10000`.execute(conn);
        return sql`select pg_sleep(3.5)`.execute(conn);
      })
      .then(
        () => undefined,
        (error: Error) => error.message,
      );
    expect(failed).toBe('Query read timeout');
  }, 20_000);
});

describe('long statements (sqlite)', () => {
  let handle: DbHandle;
  beforeAll(() => {
    handle = connect({ databaseUrl: 'sqlite::memory:', dataDir: '/nonexistent', poolSize: 1 });
  });
  afterAll(() => handle?.close());

  it('reads the mark as a comment: a statement marked long runs as written', async () => {
    expect((await longStatement('select 41 + 1 as answer').execute(handle.db)).rows).toEqual([{ answer: 42 }]);
  });
});
