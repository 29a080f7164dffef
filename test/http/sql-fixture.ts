/**
 * A base for the SQL suites, written straight into the tables (metadata document + base_rows) so the
 * read path is tested on exactly the stored formats of the contract, identically on both engines.
 */
import type { LightMyRequestResponse } from 'fastify';
import type { Db } from '../../src/db/index.js';
import { createBase, type TestApp, type TestBase } from '../helpers/index.js';
import { gateway, type Gateway } from './rows.fixtures.js';

export const T0 = Date.UTC(2026, 0, 5, 10, 0, 0);

const col = (key: string, name: string, type: string, data: Record<string, unknown> | null = null) => ({
  key,
  name,
  type,
  width: 200,
  editable: true,
  resizable: true,
  draggable: true,
  data,
});

export const CITY_OPTIONS = [
  { id: '111111', name: 'Munich', color: '#FFFCB5', textColor: '#202020' },
  { id: '222222', name: 'Berlin', color: '#FFEAB6', textColor: '#202020' },
  { id: '333333', name: 'Hamburg', color: '#FFD9C8', textColor: '#202020' },
];
export const TAG_OPTIONS = [
  { id: '444444', name: 'red', color: '#FFFCB5', textColor: '#202020' },
  { id: '555555', name: 'green', color: '#FFEAB6', textColor: '#202020' },
  { id: '666666', name: 'blue', color: '#FFD9C8', textColor: '#202020' },
];

export const CONTACT_COLUMNS = [
  col('0000', 'Name', 'text'),
  col('c001', 'Age', 'number', { format: 'number', decimal: 'dot', thousands: 'no' }),
  col('c002', 'City', 'single-select', { options: CITY_OPTIONS }),
  col('c003', 'Tags', 'multiple-select', { options: TAG_OPTIONS }),
  col('c004', 'Active', 'checkbox'),
  col('c005', 'Birthday', 'date', { format: 'YYYY-MM-DD' }),
  col('c006', 'Meeting', 'date', { format: 'YYYY-MM-DD HH:mm' }),
  col('c007', 'Duration', 'duration', { format: 'duration', duration_format: 'h:mm' }),
  col('c008', 'Rating', 'rate', { rate_max_number: 5 }),
  col('c009', 'Email', 'email'),
  col('c010', 'Site', 'url'),
  col('c011', 'Notes', 'long-text'),
  col('c012', 'People', 'collaborator'),
  col('c013', 'Code', 'auto-number', { format: '0000', digits: 4, prefix_type: 'string', prefix: '', max_used_auto_number: 6 }),
  col('c014', 'Created', 'ctime'),
  col('c015', 'Modified', 'mtime'),
  col('c016', 'Author', 'creator'),
  col('c017', 'Editor', 'last-modifier'),
  col('c018', 'Photos', 'image'),
  col('c019', 'Files', 'file'),
  col('c020', 'Place', 'geolocation', { geo_format: 'lng_lat' }),
  col('c021', 'Full Name', 'text'),
  col('c022', 'Größe', 'number', { format: 'number', decimal: 'dot', thousands: 'no' }),
];

const ALICE = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@auth.local';
const BOB = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb@auth.local';

/** Stored rows of `Contacts` (cells keyed by column key, as the rows module stores them). */
export const CONTACT_ROWS: Array<{ id: string; data: Record<string, unknown>; creator: string; ctime: number }> = [
  {
    id: 'row-alice-000000000001',
    creator: ALICE,
    ctime: T0,
    data: {
      '0000': 'Alice', c001: 30, c002: 'Berlin', c003: ['red', 'green'], c004: true, c005: '1994-03-01', c006: '2026-01-10 09:30',
      c007: 5400, c008: 4, c009: 'alice@example.com', c010: 'https://alice.example', c011: 'Line 1\nLine 2', c012: [ALICE],
      c013: '0001', c018: ['https://img.example/a.png'], c019: [{ name: 'a.pdf', url: 'https://f.example/a.pdf', size: 1 }],
      c020: { lng: 13.4, lat: 52.5 }, c021: 'Alice Smith', c022: 1.68,
    },
  },
  {
    id: 'row-bob-00000000000002',
    creator: BOB,
    ctime: T0 + 60_000,
    data: {
      '0000': 'Bob', c001: 25, c002: 'Munich', c003: ['blue'], c004: false, c005: '1999-12-31', c006: '2026-01-10 14:00',
      c007: 60, c008: 2, c009: 'bob@example.com', c012: [BOB, ALICE], c013: '0002', c021: 'Bob Jones', c022: 1.8,
    },
  },
  {
    id: 'row-charlie-0000000003',
    creator: ALICE,
    ctime: T0 + 120_000,
    data: { '0000': 'Charlie', c001: 35, c002: 'Berlin', c003: ['green'], c005: '1989-07-14', c008: 5, c013: '0003', c021: "O'Brien" },
  },
  {
    id: 'row-diana-000000000004',
    creator: BOB,
    ctime: T0 + 180_000,
    data: { '0000': 'Diana', c001: 28, c002: 'Hamburg', c004: true, c007: 0, c008: 0, c011: '100% sure_thing', c013: '0004', c022: 1.68 },
  },
  {
    id: 'row-empty-000000000005',
    creator: ALICE,
    ctime: T0 + 240_000,
    data: { '0000': 'alice lower', c013: '0005', c003: [], c012: [] },
  },
  {
    id: 'row-nulls-000000000006',
    creator: BOB,
    ctime: T0 + 300_000,
    data: { c001: -2.5, c013: '0006', c002: 'Munich', c004: false },
  },
];

/** The metadata document of the SQL test base: `Contacts` (every column type) and `Other Table`. */
export function sqlMetadata() {
  return {
    version: 1,
    format_version: 9,
    settings: {},
    tables: [
      { _id: '0000', name: 'Contacts', is_header_locked: false, header_settings: {}, summary_configs: {}, columns: CONTACT_COLUMNS, views: [] },
      { _id: 'tb02', name: 'Other Table', is_header_locked: false, header_settings: {}, summary_configs: {}, columns: [col('0000', 'Title', 'text')], views: [] },
    ],
  };
}

/** Replace an existing base's metadata and rows with the SQL test data. */
export async function seedSqlData(db: Db, baseId: number): Promise<void> {
  await db.updateTable('base_metadata').set({ data: JSON.stringify(sqlMetadata()) }).where('base_id', '=', baseId).execute();
  await db.deleteFrom('base_rows').where('base_id', '=', baseId).execute();
  await db
    .insertInto('base_rows')
    .values([
      ...CONTACT_ROWS.map((r) => ({
        base_id: baseId,
        table_id: '0000',
        row_id: r.id,
        data: JSON.stringify(r.data),
        ctime: r.ctime,
        mtime: r.ctime + 1000,
        creator: r.creator,
        last_modifier: r.creator,
      })),
      { base_id: baseId, table_id: 'tb02', row_id: 'row-other-000000000001', data: JSON.stringify({ '0000': 'Other' }), ctime: T0, mtime: T0, creator: ALICE, last_modifier: ALICE },
    ])
    .execute();
}

/** A base whose only table is also called `Contacts`, holding one row that other bases must never see. */
export async function seedSecretData(db: Db, baseId: number): Promise<void> {
  const meta = { version: 1, format_version: 9, settings: {}, tables: [{ _id: '0000', name: 'Contacts', is_header_locked: false, header_settings: {}, summary_configs: {}, columns: [col('0000', 'Name', 'text')], views: [] }] };
  await db.updateTable('base_metadata').set({ data: JSON.stringify(meta) }).where('base_id', '=', baseId).execute();
  await db
    .insertInto('base_rows')
    .values({ base_id: baseId, table_id: '0000', row_id: 'row-secret-00000000001', data: JSON.stringify({ '0000': 'Secret' }), ctime: T0, mtime: T0, creator: ALICE, last_modifier: ALICE })
    .execute();
}

export const USERS = { ALICE, BOB };

/** The SQL test base behind a Gateway, plus a second base of the same owner holding a secret row. */
export async function sqlGateway(t: TestApp): Promise<SqlGateway> {
  const g = await gateway(t);
  await seedSqlData(t.container.db, g.base.id);
  const secret = await createBase(t, g.owner);
  await seedSecretData(t.container.db, secret.id);
  const sql = (body: unknown, token?: string, suffix = 'sql/') => g.call('POST', suffix, body, token);
  const query = async (text: string, options: { parameters?: unknown[]; convert_keys?: boolean } = {}) => {
    const res = await sql({ sql: text, ...options });
    if (res.statusCode !== 200) throw new Error(`${text} → ${res.statusCode} ${res.body}`);
    return res.json<{ metadata: Array<Record<string, unknown>>; results: Array<Record<string, unknown>> }>();
  };
  return { ...g, secret, sql, query };
}

export interface SqlGateway extends Gateway {
  secret: TestBase;
  sql(body: unknown, token?: string, suffix?: string): Promise<LightMyRequestResponse>;
  query(text: string, options?: { parameters?: unknown[]; convert_keys?: boolean }): Promise<{ metadata: Array<Record<string, unknown>>; results: Array<Record<string, unknown>> }>;
}

/** Everything stored for the base (rows, events, metadata version) as one comparable value. */
export async function snapshot(t: TestApp, baseIds: number[]): Promise<unknown> {
  const db = t.container.db;
  const rows = await db.selectFrom('base_rows').select(['base_id', 'table_id', 'row_id', 'data', 'mtime', 'last_modifier']).where('base_id', 'in', baseIds).orderBy('id').execute();
  const events = await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const meta = await db.selectFrom('base_metadata').select(['base_id', 'version', 'data']).where('base_id', 'in', baseIds).orderBy('base_id').execute();
  return {
    rows: rows.map((r) => ({ ...r, data: typeof r.data === 'string' ? JSON.parse(r.data) : r.data, mtime: Number(r.mtime) })),
    events: Number(events.n),
    meta,
  };
}
