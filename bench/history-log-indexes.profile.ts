/**
 * What each b-tree of the operation log costs a single-row write on SQLite, outside the app: one
 * operation (and its row-index entry) per transaction, as a single-row update logs it, into an
 * in-memory database already holding 200,000 operations, for the current layout and variants
 * without one part. CPU per transaction, medians of 30 rounds of 500, variants interleaved.
 *
 *   npx tsx bench/history-log-indexes.profile.ts
 */
import SQLite from 'better-sqlite3';
import { loadavg } from 'node:os';
import { median } from './lib/harness.js';

type Index = 'base' | 'table' | 'user' | 'inserts' | 'rowkey';
type Variant = { auto: boolean; idx: Index[]; rows: boolean; rowkey?: boolean };
const VARIANTS: Record<string, Variant> = {
  'current (3 indexes, partial inserts index, row index)': { auto: true, idx: ['base', 'table', 'user', 'inserts'], rows: true },
  'no AUTOINCREMENT': { auto: false, idx: ['base', 'table', 'user', 'inserts'], rows: true },
  'no row-index entry': { auto: true, idx: ['base', 'table', 'user', 'inserts'], rows: false },
  'row key in the operation, indexed': { auto: true, idx: ['base', 'table', 'user', 'inserts', 'rowkey'], rows: false, rowkey: true },
  'no author index': { auto: true, idx: ['base', 'table', 'inserts'], rows: true },
  'no table index': { auto: true, idx: ['base', 'user', 'inserts'], rows: true },
  'table alone': { auto: false, idx: [], rows: false },
};
const INDEXES: Record<Index, string> = {
  base: 'CREATE INDEX a ON operation_log (base_id, id)',
  table: 'CREATE INDEX b ON operation_log (base_id, table_id, id)',
  user: 'CREATE INDEX c ON operation_log (base_id, op_user, id)',
  inserts: `CREATE INDEX d ON operation_log (base_id, op_time) WHERE op_type IN ('insert_row', 'insert_rows')`,
  rowkey: 'CREATE INDEX e ON operation_log (base_id, row_key, id)',
};
const CHANGES = JSON.stringify({ o: 'modify_row', t: '0000', rows: [{ r: 'AbCdEfGhIjKlMnOpQrStUv', n: 'row 12', a: { '0000': 'v12.3' }, b: { '0000': 'v11.3' } }] });
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function setup(v: Variant): () => void {
  const db = new SQLite(':memory:');
  db.exec(`CREATE TABLE operation_log (id integer PRIMARY KEY ${v.auto ? 'AUTOINCREMENT' : ''}, base_id bigint NOT NULL, write_id varchar(64) NOT NULL,
    op_type varchar(32) NOT NULL, table_id varchar(8), op_user varchar(255) NOT NULL, op_app varchar(255), op_time bigint NOT NULL,
    row_count integer NOT NULL, changes text NOT NULL, reverts bigint ${v.rowkey ? ', row_key bigint' : ''})`);
  for (const i of v.idx) db.exec(INDEXES[i]);
  db.exec('CREATE TABLE operation_log_rows (base_id bigint NOT NULL, row_key bigint NOT NULL, op_id bigint NOT NULL, PRIMARY KEY (base_id, row_key, op_id)) WITHOUT ROWID');
  const columns = `base_id, write_id, op_type, table_id, op_user, op_app, op_time, row_count, changes, reverts${v.rowkey ? ', row_key' : ''}`;
  const insert = db.prepare(`INSERT INTO operation_log (${columns}) VALUES (${columns.split(',').map(() => '?').join(', ')})`);
  const rowInsert = db.prepare('INSERT INTO operation_log_rows (base_id, row_key, op_id) VALUES (?, ?, ?)');
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  let n = 0;
  const one = () => {
    n++;
    const base = n % 50;
    const key = Math.floor(Math.random() * 2 ** 52);
    const params: unknown[] = [base, `c0ffee00-1234-4567-89ab-${n.toString(16).padStart(12, '0')}`, 'modify_row', '0000', `user${n % 7}@auth.local`, null, 1_700_000_000_000 + n, 1, CHANGES, null];
    if (v.rowkey) params.push(key);
    const id = insert.run(params).lastInsertRowid;
    if (v.rows) rowInsert.run(base, key, id);
  };
  db.exec('BEGIN');
  for (let i = 0; i < 200_000; i++) one();
  db.exec('COMMIT');
  return () => {
    begin.run();
    one();
    commit.run();
  };
}

const writes = Object.entries(VARIANTS).map(([name, v]) => ({ name, write: setup(v), times: [] as number[] }));
for (let round = 0; round < 30; round++) {
  for (const w of writes) {
    const start = cpu();
    for (let i = 0; i < 500; i++) w.write();
    w.times.push(((cpu() - start) / 500) * 1000);
  }
}
console.log(`load ${loadavg()[0]!.toFixed(1)}; CPU per one-operation transaction (µs):`);
for (const w of writes) console.log(`${median(w.times).toFixed(1).padStart(7)}  ${w.name}`);
