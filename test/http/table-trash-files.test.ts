import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeTrashedTable, type BaseFiles } from '../../src/modules/history/table-trash.js';
import { sql } from 'kysely';
import { filesNamedByLog, LOG_FILE_SCAN_MAX, LOG_FILE_WINDOW } from '../../src/modules/history/logged-files.js';
import { backfillFiles, filesNamedByRefs, filesRecordedFrom } from '../../src/modules/history/file-refs.js';
import { pruneOperations } from '../../src/modules/history/history.repository.js';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, appWithGateway, uploadAsset, type Gateway } from './rows.fixtures.js';

/** Purging a trashed table deletes the files only its rows named; files other rows name stay. */
describe.each(DIALECTS)('files of a purged table (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => ({ t, g } = await appWithGateway(dialect)));
  afterAll(() => t.close());

  const upload = (name: string, bytes: string) => uploadAsset(t, g, name, bytes);
  const url = (path: string) => `http://basegate.test/workspace/${g.base.workspaceId}/asset/${g.base.uuid}/${path}`;
  const fileCell = (path: string) => [{ name: path.split('/').pop(), size: 5, type: 'file', url: url(path) }];
  const exists = async (path: string) => (await t.container.assets.storage.stat(`${g.base.uuid}/${path}`)) !== null;
  const withFiles = async (name: string, rows: Array<Record<string, unknown>>) => {
    await addTable(g, name, [{ column_name: 'Name', column_type: 'text' }, { column_name: 'Doc', column_type: 'file' }, { column_name: 'Notes', column_type: 'long-text' }]);
    return appendRows(g, name, rows);
  };
  const entryOf = async (name: string) => ((await g.call('GET', 'trash/tables/')).json().tables as Array<{ id: number; table_name: string }>).find((x) => x.table_name === name)!;

  it('deletes the files only its rows named, not those of live tables, other trashed tables or no row', async () => {
    const only = await upload('only.txt', 'only');
    const inText = await upload('pic.png', 'image');
    const shared = await upload('shared.txt', 'shared');
    const otherTrash = await upload('other.txt', 'other');
    const unnamed = await upload('unnamed.txt', 'unnamed');
    await withFiles('Gone', [
      { Name: 'a', Doc: fileCell(only) },
      { Name: 'b', Doc: fileCell(shared), Notes: `see ![pic](${url(inText)})` },
      { Name: 'c', Doc: fileCell(otherTrash) },
    ]);
    await withFiles('Live', [{ Name: 'd', Doc: fileCell(shared) }]);
    await withFiles('AlsoGone', [{ Name: 'e', Doc: fileCell(otherTrash) }]);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Gone' })).statusCode).toBe(200);
    expect((await g.call('DELETE', 'tables/', { table_name: 'AlsoGone' })).statusCode).toBe(200);
    for (const path of [only, inText, shared, otherTrash, unnamed]) expect(await exists(path)).toBe(true);

    expect((await g.call('DELETE', `trash/tables/${(await entryOf('Gone')).id}/`)).json()).toEqual({ success: true });
    expect(await exists(only)).toBe(false);
    expect(await exists(inText)).toBe(false);
    expect(await exists(shared)).toBe(true);
    expect(await exists(otherTrash)).toBe(true);
    expect(await exists(unnamed)).toBe(true);

    // Once the other trashed table is purged too, its file goes.
    expect((await g.call('DELETE', `trash/tables/${(await entryOf('AlsoGone')).id}/`)).json()).toEqual({ success: true });
    expect(await exists(otherTrash)).toBe(false);
    expect(await exists(shared)).toBe(true);
  });

  it('keeps files a restore can still bring back: rows deleted earlier (row trash) and old cell values', async () => {
    const deleted = await upload('deleted.txt', 'deleted');
    const replaced = await upload('replaced.txt', 'replaced');
    const gone = await upload('gone.txt', 'gone');
    const [k1, k2] = await withFiles('Keeps', [
      { Name: 'k1', Doc: fileCell(deleted) },
      { Name: 'k2', Doc: fileCell(replaced) },
    ]);
    // k1 goes to the row trash; k2's file is replaced (the old value is in the log, a restore sets it back).
    expect((await g.call('DELETE', 'rows/', { table_name: 'Keeps', row_ids: [k1] })).statusCode).toBe(200);
    expect((await g.call('PUT', 'rows/', { table_name: 'Keeps', updates: [{ row_id: k2, row: { Doc: [] } }] })).statusCode).toBe(200);
    const [, , , p4] = await withFiles('Purged', [
      { Name: 'p1', Doc: fileCell(deleted) },
      { Name: 'p2', Doc: fileCell(replaced) },
      { Name: 'p3', Doc: fileCell(gone) },
      { Name: 'p4', Doc: fileCell(gone) },
    ]);
    // A row of the purged table deleted before: it cannot come back once its table is purged, so its
    // logged cells keep no file.
    expect((await g.call('DELETE', 'rows/', { table_name: 'Purged', row_ids: [p4] })).statusCode).toBe(200);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Purged' })).statusCode).toBe(200);
    expect((await g.call('DELETE', `trash/tables/${(await entryOf('Purged')).id}/`)).json()).toEqual({ success: true });
    expect(await exists(deleted)).toBe(true);
    expect(await exists(replaced)).toBe(true);
    expect(await exists(gone)).toBe(false);
    // And they do come back, naming files that are there.
    expect((await g.call('PUT', `trash/rows/${k1}/`, {})).statusCode).toBe(200);
    const back = (await g.call('GET', 'rows/?table_name=Keeps')).json().rows as Array<{ _id: string }>;
    expect(JSON.stringify(back.find((r) => r._id === k1))).toContain(url(deleted));
  });

  it('a purge that stopped after deleting the rows still deletes their files when the tick finishes it', async () => {
    const file = await upload('late.txt', 'late');
    await withFiles('Late', [{ Name: 'x', Doc: fileCell(file) }]);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Late' })).statusCode).toBe(200);
    const entry = await entryOf('Late');
    const failing = { remove: () => Promise.reject(new Error('storage down')) };
    await expect(purgeTrashedTable(t.container.db, entry.id, failing)).rejects.toThrow('storage down');
    const stored = await t.container.db.selectFrom('trashed_tables').select('meta').where('id', '=', entry.id).executeTakeFirst();
    expect(JSON.parse(stored!.meta).files).toEqual([file]);
    expect(await exists(file)).toBe(true);
    // The rows are gone already; the entry (claimed) still names the file, and the tick finishes it.
    expect(await t.container.history.service.purgeExpiredTrash(t.clock.now())).toEqual({ purged: 1 });
    expect(await exists(file)).toBe(false);
    expect(await t.container.db.selectFrom('trashed_tables').select('id').where('id', '=', entry.id).executeTakeFirst()).toBeUndefined();
  });

  it('keeps a file a row of an older trash entry names (rows copied to trashed_table_rows)', async () => {
    const old = await upload('old-layout.txt', 'old');
    // An entry of the layout before tables stayed in place: its rows are copies, restorable from there.
    const entry = await t.container.db
      .insertInto('trashed_tables')
      .values({ base_id: g.base.id, table_id: 'oLd1', table_name: 'OldLayout', deleted_by: 'x@auth.local', deleted_at: t.clock.now(), row_count: 1, meta: JSON.stringify({ table: { _id: 'oLd1', name: 'OldLayout', columns: [] }, linkColumns: [] }) })
      .returning('id')
      .executeTakeFirstOrThrow();
    await t.container.db
      .insertInto('trashed_table_rows')
      .values({ trash_id: Number(entry.id), row_id: 'oldrow', data: JSON.stringify({ row: { _id: 'oldrow', data: { '0000': fileCell(old) } }, links: {} }) })
      .execute();
    await withFiles('NamesOld', [{ Name: 'o', Doc: fileCell(old) }]);
    expect((await g.call('DELETE', 'tables/', { table_name: 'NamesOld' })).statusCode).toBe(200);
    expect((await g.call('DELETE', `trash/tables/${(await entryOf('NamesOld')).id}/`)).json()).toEqual({ success: true });
    expect(await exists(old)).toBe(true);
  });

  /** `count` operations of the base seeded by SQL (none names a file). */
  const seedOperations = async (count: number) => {
    const series =
      dialect === 'postgres'
        ? sql`SELECT g AS n FROM generate_series(1, ${sql.lit(count)}) g`
        : sql`WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < ${sql.lit(count)}) SELECT n FROM s`;
    await sql`INSERT INTO operation_log (base_id, write_id, op_type, table_id, op_user, op_app, op_time, row_count, changes, reverts)
      SELECT ${g.base.id}, 'seed', 'modify_row', '0000', 'seed@auth.local', NULL, ${t.clock.now()}, 1, '{"o":"modify_row","t":"0000","rows":[]}', NULL
        FROM (${series}) AS q`.execute(t.container.db);
  };
  /** A log from before the file entries (migration 0045): none recorded, the mark after the newest operation. */
  const forgetRecordedFiles = async () => {
    await sql`DELETE FROM operation_log_files`.execute(t.container.db);
    await sql`UPDATE operation_log_files_from SET from_id = (SELECT MAX(id) + 1 FROM operation_log) WHERE id = 1`.execute(t.container.db);
  };
  /** A file named by an old value only (a restore of the update puts it back) and one named by the purged table's rows only. */
  const keptAndPurged = async (prefix: string) => {
    const oldValue = await upload(`${prefix}-old-value.txt`, 'old value');
    const onlyPurged = await upload(`${prefix}-only-purged.txt`, 'only purged');
    const [k] = await withFiles(`${prefix}Keeps`, [{ Name: 'k', Doc: fileCell(oldValue) }]);
    expect((await g.call('PUT', 'rows/', { table_name: `${prefix}Keeps`, updates: [{ row_id: k, row: { Doc: [] } }] })).statusCode).toBe(200);
    await withFiles(`${prefix}Purged`, [
      { Name: 'p1', Doc: fileCell(oldValue) },
      { Name: 'p2', Doc: fileCell(onlyPurged) },
    ]);
    return { oldValue, onlyPurged, purged: `${prefix}Purged` };
  };
  const metaOf = async (id: number) => {
    const row = await t.container.db.selectFrom('trashed_tables').select(['meta', 'deleted_at']).where('id', '=', id).executeTakeFirst();
    return row && { deletedAt: Number(row.deleted_at), ...(JSON.parse(row.meta) as { files?: string[]; logScan?: { top: number; below: number; named: string[]; done: boolean } }) };
  };
  /** The purge of trash entry `id` is over: nothing left to walk, the file an old value names kept, the other gone. */
  const expectPurged = async (id: number, kept: string, gone: string) => {
    expect(await metaOf(id)).toBeUndefined();
    expect(await exists(kept)).toBe(true);
    expect(await exists(gone)).toBe(false);
  };

  it('a purge in a log longer than a walk may read ends on the request path: it asks the files recorded at write time, not the log', async () => {
    const { oldValue, onlyPurged, purged } = await keptAndPurged('Rec');
    await seedOperations(LOG_FILE_SCAN_MAX + LOG_FILE_WINDOW + 7);
    expect((await g.call('DELETE', 'tables/', { table_name: purged })).statusCode).toBe(200);
    const entry = await entryOf(purged);
    expect((await g.call('DELETE', `trash/tables/${entry.id}/`)).json()).toEqual({ success: true });
    // Done at once: no walk left for the tick, the old value's file kept, the other gone.
    await expectPurged(entry.id, oldValue, onlyPurged);
    expect(await filesNamedByRefs(t.container.db, g.base.id, 'none', [oldValue, 'files/none/nowhere.txt'])).toEqual(new Set([oldValue]));
  }, 120_000);

  it('a purge that stops at any step after the rows (the walk saved, the entries unreadable, the storage down) is finished by the next run: no file lost or left', async () => {
    const { oldValue, onlyPurged, purged } = await keptAndPurged('Crash');
    expect((await g.call('DELETE', 'tables/', { table_name: purged })).statusCode).toBe(200);
    const entry = await entryOf(purged);
    const db = t.container.db;
    // 1. The process stops while asking the entries (after the rows went and the walk was saved).
    await sql`ALTER TABLE operation_log_files RENAME TO operation_log_files_away`.execute(db);
    try {
      await expect(purgeTrashedTable(db, entry.id, (t.container.history.service as unknown as { files: BaseFiles }).files)).rejects.toThrow();
    } finally {
      await sql`ALTER TABLE operation_log_files_away RENAME TO operation_log_files`.execute(db);
    }
    const stopped = await metaOf(entry.id);
    expect(stopped?.deletedAt).toBe(0);
    expect(stopped?.files?.sort()).toEqual([oldValue, onlyPurged].sort());
    expect(await exists(oldValue)).toBe(true);
    expect(await exists(onlyPurged)).toBe(true);
    // 2. The next run stops at the files (the storage fails).
    await expect(purgeTrashedTable(db, entry.id, { remove: () => Promise.reject(new Error('storage down')) })).rejects.toThrow('storage down');
    expect(await exists(onlyPurged)).toBe(true);
    // 3. The tick finishes it.
    expect(await t.container.history.service.purgeExpiredTrash(t.clock.now())).toEqual({ purged: 1 });
    await expectPurged(entry.id, oldValue, onlyPurged);
  });

  it('an older log (operations without file entries) is walked, saved in steps; the tick finishes a walk the request path left', async () => {
    const { oldValue, onlyPurged, purged } = await keptAndPurged('Old');
    await seedOperations(LOG_FILE_SCAN_MAX + LOG_FILE_WINDOW + 7);
    await forgetRecordedFiles();
    expect((await g.call('DELETE', 'tables/', { table_name: purged })).statusCode).toBe(200);
    const entry = await entryOf(purged);

    // The request path: rows gone, the old log read as far as its budget; the entry stays claimed
    // (hidden, not restorable) with the walk's progress, and both files stay until the walk is done.
    expect((await g.call('DELETE', `trash/tables/${entry.id}/`)).json()).toEqual({ success: true });
    expect((await g.call('GET', 'trash/tables/')).json().tables.map((x: { id: number }) => x.id)).not.toContain(entry.id);
    const pending = await metaOf(entry.id);
    expect(pending?.deletedAt).toBe(0);
    expect(pending?.logScan?.done).toBe(false);
    expect(pending!.logScan!.below).toBeLessThan(pending!.logScan!.top);
    expect(await exists(oldValue)).toBe(true);
    expect(await exists(onlyPurged)).toBe(true);

    // The tick resumes the walk where it stopped and ends it: the file the old value names stays, the other goes.
    expect(await t.container.history.service.purgeExpiredTrash(t.clock.now())).toEqual({ purged: 1 });
    await expectPurged(entry.id, oldValue, onlyPurged);
    expect(await filesNamedByLog(t.container.db, g.base.id, 'none', [oldValue, 'files/none/nowhere.txt'])).toEqual(new Set([oldValue]));
  }, 120_000);

  it('the backfill records the files of an older log in steps; then a purge in it ends on the request path; pruning takes the entries with the operations', async () => {
    const { oldValue, onlyPurged, purged } = await keptAndPurged('Back');
    await seedOperations(LOG_FILE_SCAN_MAX + LOG_FILE_WINDOW + 7);
    await forgetRecordedFiles();
    const db = t.container.db;
    // Steps of 1 operation that may name a file: the mark moves down step by step, then reaches 1.
    const marks: number[] = [];
    for (let mark = 0; mark !== 1; ) marks.push((mark = await backfillFiles(db, 1)));
    expect(marks.length).toBeGreaterThanOrEqual(2);
    expect(marks).toEqual([...marks].sort((a, b) => b - a));
    expect(await filesRecordedFrom(db)).toBe(1);
    expect(await backfillFiles(db)).toBe(1);

    expect((await g.call('DELETE', 'tables/', { table_name: purged })).statusCode).toBe(200);
    const entry = await entryOf(purged);
    expect((await g.call('DELETE', `trash/tables/${entry.id}/`)).json()).toEqual({ success: true });
    await expectPurged(entry.id, oldValue, onlyPurged);

    // Pruned operations lose their entries (a year later everything is past the retention).
    const entries = async () => Number((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM operation_log_files WHERE base_id = ${g.base.id}`.execute(db)).rows[0]!.n);
    expect(await entries()).toBeGreaterThan(0);
    while ((await pruneOperations(db, t.clock.now() + 366 * 86_400_000, 1000)) > 0);
    expect(await entries()).toBe(0);
  }, 180_000);
});
