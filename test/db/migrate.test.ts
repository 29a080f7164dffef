import { Migrator, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, type DbHandle } from '../../src/db/index.js';
import { migrations } from '../../src/db/migrations/index.js';
import { DIALECTS, createTestDatabase } from '../helpers/db.js';
import { rowKey } from '../../src/shared/row-key.js';
import { listOperations } from '../../src/modules/history/row-operations.js';

const NAMES = Object.keys(migrations);
const LAST = NAMES[NAMES.length - 1]!;

describe.each(DIALECTS)('migrateToLatest (%s)', (dialect) => {
  let database: DbHandle | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  it('applies every migration to an empty database, then has nothing to do', async () => {
    database = await createTestDatabase(dialect);
    expect(await migrateToLatest(database.db)).toEqual(NAMES);
    expect(await migrateToLatest(database.db)).toEqual([]);
  });

  it('still applies the last migration when all the others are applied', async () => {
    database = await createTestDatabase(dialect);
    await migrateUpTo(database, NAMES[NAMES.length - 2]!);
    expect(await migrateToLatest(database.db)).toEqual([LAST]);
    expect(await migrateToLatest(database.db)).toEqual([]);
  });

  it('0040 keys the operation log\'s row index entries by rowKey of their row id, keeping every entry', async () => {
    database = await createTestDatabase(dialect);
    await migrateUpTo(database, '0038_snapshot_files');
    const entries = Array.from({ length: 5 }, (_, i) => ({ base_id: 1 + (i % 2), row_id: `Row${i}abcdefghijklmnopq`, op_id: 10 + i }));
    for (const e of entries) await sql`insert into operation_log_rows (base_id, row_id, op_id) values (${e.base_id}, ${e.row_id}, ${e.op_id})`.execute(database.db);
    await migrateUpTo(database, '0040_history_row_keys');
    const { rows } = await sql<{ base_id: number; row_key: number; op_id: number }>`select base_id, row_key, op_id from operation_log_rows order by op_id`.execute(database.db);
    expect(rows.map((r) => [Number(r.base_id), Number(r.row_key), Number(r.op_id)])).toEqual(entries.map((e) => [e.base_id, rowKey(e.row_id), e.op_id]));
  });

  it('0043 starts the row index\'s watermark at the newest operation: entries written before it are complete, later single-row ones are written by a reader', async () => {
    database = await createTestDatabase(dialect);
    await migrateUpTo(database, '0042_oplog_inserts');
    const db = database.db;
    const insertOp = (id: number, rowId: string) =>
      sql`insert into operation_log (id, base_id, write_id, op_type, table_id, op_user, op_time, row_count, changes)
          values (${id}, 1, ${`w${id}`}, 'modify_row', '0000', 'u', ${id}, 1, ${JSON.stringify({ o: 'modify_row', t: '0000', rows: [{ r: rowId, n: '', a: { '0000': id }, b: { '0000': id - 1 } }] })})`.execute(db);
    // Logged before 0043: the operation and its entry.
    await insertOp(7, 'OldRowabcdefghijklmnop');
    await sql`insert into operation_log_rows (base_id, row_key, op_id) values (1, ${rowKey('OldRowabcdefghijklmnop')}, 7)`.execute(db);
    await migrateToLatest(db);
    const { rows } = await sql<{ indexed_to: number }>`select indexed_to from operation_log_indexed`.execute(db);
    expect(rows.map((r) => Number(r.indexed_to))).toEqual([7]);
    // After it (SQLite): a single-row operation carries its key and no entry until a reader needs it.
    await sql`insert into operation_log (id, base_id, write_id, op_type, table_id, op_user, op_time, row_count, changes, row_key)
        values (8, 1, 'w8', 'modify_row', '0000', 'u', 8, 1, ${JSON.stringify({ o: 'modify_row', t: '0000', rows: [{ r: 'OldRowabcdefghijklmnop', n: '', a: {}, b: {} }] })}, ${dialect === 'sqlite' ? rowKey('OldRowabcdefghijklmnop') : null})`.execute(db);
    if (dialect === 'postgres') await sql`insert into operation_log_rows (base_id, row_key, op_id) values (1, ${rowKey('OldRowabcdefghijklmnop')}, 8)`.execute(db);
    const found = await listOperations(db as never, 1, { rowId: 'OldRowabcdefghijklmnop' }, 10);
    expect(found.map((op) => op.id)).toEqual([8, 7]);
  });

  it('gives tests a migrated database that the migrator takes as up to date and that accepts writes', async () => {
    database = await createTestDatabase(dialect, { migrated: true });
    expect(await migrateToLatest(database.db)).toEqual(dialect === 'sqlite' ? NAMES : []);
    const { rows } = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(database.db);
    expect(Number(rows[0]!.n)).toBe(NAMES.length);
    await sql`insert into users (virtual_id, email, name, password_hash, created_at) values ('v1', 'a@example.com', 'A', 'x', 1)`.execute(database.db);
    await sql`insert into users (virtual_id, email, name, password_hash, created_at) values ('v2', 'b@example.com', 'B', 'x', 1)`.execute(database.db);
    const ids = await sql<{ id: number }>`select id from users order by id`.execute(database.db);
    expect(ids.rows.map((r) => Number(r.id))).toEqual([1, 2]);
  });
});

/** Kysely's migrator up to `name`, in the connection's own schema (as migrate.ts pins it), retrying a catalog race. */
async function migrateUpTo(database: DbHandle, name: string): Promise<void> {
  const schema = database.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(database.db)).rows[0]!.s : undefined;
  const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  for (let attempt = 1; ; attempt++) {
    const { error } = await migrator.migrateTo(name);
    if (!error) return;
    if (attempt >= 5) throw error;
  }
}
