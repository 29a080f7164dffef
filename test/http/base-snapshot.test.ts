import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, SharedDatabase, createTestApp, createUser, type TestApp } from '../helpers/index.js';
import { adminQuery } from '../helpers/db.js';
import { appendRows, gateway, through, type Gateway } from './rows.fixtures.js';

type WholeBase = { tables: Array<{ name: string; rows: Array<Record<string, unknown>>; columns: Array<{ name: string; key: string }> }> };

/**
 * `GET /api-gateway/api/v2/dtables/{uuid}/` is served from a cache keyed by the base's revision:
 * every kind of write must move the revision (or the cache would serve stale data), a failed write
 * must not, and an instance must see another instance's write on its next read.
 */
describe.each(DIALECTS)('whole-base read and its revision cache (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const read = async (as: Gateway = g, headers: Record<string, string> = {}) =>
    as.t.request({ method: 'GET', url: as.url(''), token: as.token, headers });
  const body = async (as: Gateway = g) => (await read(as)).json<WholeBase>();
  const table1 = (base: WholeBase) => base.tables.find((x) => x.name === 'Table1')!;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
  });
  afterAll(() => t.close());

  it('answers JSON with an ETag, and 304 without a body while the base is unchanged', async () => {
    const first = await read();
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"r\d+"$/);
    expect(first.json<WholeBase>().tables.map((x) => x.name)).toEqual(['Table1']);

    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await read(g, { 'if-none-match': header });
      expect(again.statusCode, header).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
    }
    expect((await read(g, { 'if-none-match': '"r999999"' })).statusCode).toBe(200);
  });

  it('shows every kind of write at once: rows, structure, links', async () => {
    const seen = new Set<string>([(await read()).headers.etag as string]);
    const expectChanged = async () => {
      const res = await read();
      expect(seen.has(res.headers.etag as string), 'ETag moved').toBe(false);
      seen.add(res.headers.etag as string);
      return res.json<WholeBase>();
    };

    const [rowId] = await appendRows(g, 'Table1', [{ Name: 'first' }]);
    expect(table1(await expectChanged()).rows.map((r) => r._id)).toEqual([rowId]);

    expect((await g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: rowId, row: { Name: 'renamed' } }] })).statusCode).toBe(200);
    const nameKey = table1(await body()).columns.find((c) => c.name === 'Name')!.key;
    expect(table1(await expectChanged()).rows[0]![nameKey]).toBe('renamed');

    expect((await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Score', column_type: 'number' })).statusCode).toBe(200);
    expect(table1(await expectChanged()).columns.map((c) => c.name)).toContain('Score');

    expect((await g.call('POST', 'tables/', { table_name: 'Other' })).statusCode).toBe(200);
    expect((await expectChanged()).tables.map((x) => x.name)).toEqual(['Table1', 'Other']);

    const link = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Other link', column_type: 'link', column_data: { table: 'Table1', other_table: 'Other' } });
    expect(link.statusCode).toBe(200);
    await expectChanged();
    const [otherRow] = await appendRows(g, 'Other', [{ Name: 'target' }]);
    await expectChanged();
    const linked = await g.call('POST', 'links/', { link_id: link.json().data.link_id, table_name: 'Table1', other_table_name: 'Other', other_rows_ids_map: { [rowId!]: [otherRow] } });
    expect(linked.statusCode, linked.body).toBe(200);
    await expectChanged();

    expect((await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [rowId] })).statusCode).toBe(200);
    expect(table1(await expectChanged()).rows).toEqual([]);
  });

  it('keeps the revision when a write is refused and rolled back', async () => {
    const before = await read();
    const refused = await g.call('POST', 'rows/', { table_name: 'Table1', rows: [{ Score: 'not a number' }] });
    expect(refused.statusCode).toBe(400);
    expect((await read(g, { 'if-none-match': before.headers.etag as string })).statusCode).toBe(304);
  });

  it('sees a write made through another instance (its own connections, same database) on the next read (SQLite: after 1 ms)', async () => {
    const shared = new SharedDatabase(dialect);
    const clock = t.clock;
    const first = await createTestApp(dialect, {}, { database: await shared.open(), clock });
    const second = await createTestApp(dialect, {}, { database: await shared.open(), clock });
    try {
      const here = await gateway(first);
      const there = through(second, here);
      expect(table1(await body(here)).rows).toHaveLength(0);
      expect(table1(await body(there)).rows).toHaveLength(0); // both instances have it cached now
      for (let i = 1; i <= 3; i++) {
        await appendRows(i % 2 ? there : here, 'Table1', [{ Name: `write ${i}` }]);
        // On SQLite another process's commit may go unseen for up to 1 ms (DEFAULT_SNAPSHOT_OPTIONS.externalChangesEveryMs).
        if (dialect === 'sqlite') await new Promise((resolve) => setTimeout(resolve, 2));
        expect(table1(await body(here)).rows).toHaveLength(i);
        expect(table1(await body(there)).rows).toHaveLength(i);
      }
    } finally {
      await first.close();
      await second.close();
      await shared.dispose();
    }
  });

  if (dialect === 'postgres')
    it('PostgreSQL: answers cached reads on the revision channel, still sees another instance\'s write on the very next read, and asks the database while the channel is killed', async () => {
      const shared = new SharedDatabase(dialect);
      const first = await createTestApp(dialect, {}, { database: await shared.open(), clock: t.clock });
      const second = await createTestApp(dialect, {}, { database: await shared.open(), clock: t.clock });
      const until = async (condition: () => boolean, what: string) => {
        for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
        expect(condition(), what).toBe(true);
      };
      try {
        const here = await gateway(first);
        const there = through(second, here);
        const channel = first.container.database.revisionChannel!;
        // Count the revision queries of `first`'s cache.
        const snapshots = first.container.baseData.snapshots as unknown as { readRevision: (id: number) => Promise<number | undefined> };
        const readRevision = snapshots.readRevision;
        let revisionQueries = 0;
        snapshots.readRevision = (id) => ((revisionQueries += 1), readRevision(id));

        expect(table1(await body(here)).rows).toHaveLength(0); // the first read starts the channel
        await until(() => channel.isListening, 'the channel listens');
        expect(table1(await body(here)).rows).toHaveLength(0); // confirmed while listening
        const before = revisionQueries;
        for (let i = 0; i < 3; i++) expect(table1(await body(here)).rows).toHaveLength(0);
        expect(revisionQueries, 'cached reads need no revision query while the channel listens').toBe(before);

        let expected = 0;
        for (let i = 1; i <= 4; i++) {
          // The other instance's write, then at once (no wait) a read here: the sync on the channel orders them.
          await appendRows(i % 2 ? there : here, 'Table1', [{ Name: `write ${i}` }]);
          expected += 1;
          expect(table1(await body(here)).rows).toHaveLength(expected);
          expect(table1(await body(there)).rows).toHaveLength(expected);
        }

        // Kill the listening connection: reads must not trust the channel until it listens again.
        const generation = channel.generation;
        await adminQuery(`SELECT pg_terminate_backend(${channel.backendPid})`);
        for (let i = 0; i < 3; i++) {
          await appendRows(there, 'Table1', [{ Name: `while down ${i}` }]);
          expected += 1;
          const queriesBefore = revisionQueries;
          expect(table1(await body(here)).rows).toHaveLength(expected);
          if (!channel.isListening) expect(revisionQueries, 'asks the database while the channel is down').toBeGreaterThan(queriesBefore);
        }
        await until(() => channel.isListening && channel.generation > generation + 1, 'the channel listens again');
        expect(table1(await body(here)).rows).toHaveLength(expected); // confirmed in the new generation
        await appendRows(there, 'Table1', [{ Name: 'after reconnect' }]);
        expected += 1;
        expect(table1(await body(here)).rows).toHaveLength(expected);
        const settled = revisionQueries;
        expect(table1(await body(here)).rows).toHaveLength(expected);
        expect(revisionQueries, 'back on the channel').toBe(settled);
      } finally {
        await first.close();
        await second.close();
        await shared.dispose();
      }
    });

  it("forgets a deleted user's bases even when a read cached them again while the user was being deleted", async () => {
    const doomed = await gateway(t);
    expect((await read(doomed)).statusCode).toBe(200);
    const cachedBefore = t.container.baseData.snapshots.stats.entries;
    const admin = await createUser(t, { admin: true });
    // Runs after every listener of the app, just before the delete commits: the window a concurrent read has.
    let raced = 0;
    t.container.accounts.onUserDeleting(async (userId) => {
      if (userId === doomed.owner.id) raced = (await read(doomed)).statusCode;
    });
    const del = await t.request({ method: 'DELETE', url: `/api/v2.1/admin/users/${doomed.owner.email}/`, token: admin.token });
    expect(del.statusCode, del.body).toBe(200);
    expect(raced).toBe(200);
    expect(t.container.baseData.snapshots.stats.entries).toBe(cachedBefore - 1); // its body is not kept either
    const gone = await read(doomed);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error_msg: 'dtable not found.' });
  });

  it('answers 404 once the base is deleted, and a bad token never reaches the cache', async () => {
    const doomed = await gateway(t);
    expect((await read(doomed)).statusCode).toBe(200);
    // Change the signature's first character: its last ones may carry only padding bits.
    const [head, payload, signature] = doomed.token.split('.');
    const tampered = `${head}.${payload}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`;
    const forged = await t.request({ method: 'GET', url: doomed.url(''), token: tampered });
    expect(forged.statusCode).toBe(403);
    const del = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${doomed.base.workspaceId}/dtable/`, token: doomed.owner.token, payload: { name: doomed.base.name } });
    expect(del.statusCode, del.body).toBe(200);
    const gone = await read(doomed);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error_msg: 'dtable not found.' });
  });
});
