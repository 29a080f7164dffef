import type { LightMyRequestResponse } from 'fastify';
import { sql, type Kysely } from 'kysely';
import type { Database, DialectName } from '../../src/db/index.js';
import { multipart } from '../helpers/asset-fixtures.js';
import { basePath, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

/** A base with an owner and an `rw` Base-Token, and a caller for its `/api-gateway/` routes. */
export interface Gateway {
  t: TestApp;
  owner: TestUser;
  base: TestBase;
  token: string;
  url(suffix: string): string;
  call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', suffix: string, payload?: unknown, token?: string): Promise<LightMyRequestResponse>;
}

export async function gateway(t: TestApp, owner?: TestUser): Promise<Gateway> {
  const user = owner ?? (await createUser(t));
  const base = await createBase(t, user);
  const token = await baseToken(t, user, base);
  return through(t, { owner: user, base, token });
}

/** The same base and token, called through app instance `t` (e.g. another instance on the same database). */
export function through(t: TestApp, { owner, base, token }: Pick<Gateway, 'owner' | 'base' | 'token'>): Gateway {
  const url = (suffix: string) => `/api-gateway/api/v2/dtables/${base.uuid}/${suffix}`;
  return {
    t,
    owner,
    base,
    token,
    url,
    call: (method, suffix, payload, as) =>
      t.request({ method, url: url(suffix), token: as ?? token, ...(payload === undefined ? {} : { payload: payload as object }) }),
  };
}

/** A Base-Token of another user the base is shared with read-only. */
export async function readOnlyToken(g: Gateway): Promise<string> {
  const reader = await createUser(g.t);
  const res = await g.t.request({ method: 'POST', url: basePath(g.base, 'share/'), token: g.owner.token, payload: { email: reader.email, permission: 'r' } });
  if (res.statusCode !== 201) throw new Error(`share failed: ${res.body}`);
  return baseToken(g.t, reader, g.base);
}

/** A Base-Token issued from a new API-Token named `appName` (rw). */
export async function apiTokenBaseToken(g: Gateway, appName: string, permission: 'r' | 'rw' = 'rw'): Promise<string> {
  const created = await g.t.request({ method: 'POST', url: basePath(g.base, 'api-tokens/'), token: g.owner.token, payload: { app_name: appName, permission } });
  if (created.statusCode !== 201) throw new Error(`api token failed: ${created.body}`);
  const res = await g.t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: created.json<{ api_token: string }>().api_token });
  if (res.statusCode !== 200) throw new Error(`app-access-token failed: ${res.body}`);
  return res.json<{ access_token: string }>().access_token;
}

/** Add a table with the given columns through the API; returns its metadata object. */
type NewColumn = { column_name: string; column_type: string; column_data?: unknown };

/** A test app (configured by `env`), an owner's gateway to a new base, and a table `T` (one text column `Name` unless `columns`). */
/** A test app and a gateway to a new base in it (a describe block's usual opening). */
export async function appWithGateway(dialect: DialectName, env: Record<string, string> = {}): Promise<{ t: TestApp; g: Gateway }> {
  const t = await createTestApp(dialect, env);
  return { t, g: await gateway(t) };
}

export async function appWithTable(dialect: DialectName, env: Record<string, string> = {}, columns: NewColumn[] = [{ column_name: 'Name', column_type: 'text' }]): Promise<{ t: TestApp; g: Gateway }> {
  const { t, g } = await appWithGateway(dialect, env);
  await addTable(g, 'T', columns);
  return { t, g };
}

export async function addTable(g: Gateway, name: string, columns: NewColumn[]) {
  const res = await g.call('POST', 'tables/', { table_name: name, columns });
  if (res.statusCode !== 200) throw new Error(`create table failed: ${res.body}`);
  return res.json<{ _id: string; name: string; columns: Array<{ key: string; name: string; type: string; data: Record<string, unknown> | null }> }>();
}

export async function appendRows(g: Gateway, table: string, rows: Array<Record<string, unknown>>): Promise<string[]> {
  const res = await g.call('POST', 'rows/', { table_name: table, rows });
  if (res.statusCode !== 200) throw new Error(`append failed: ${res.body}`);
  return res.json<{ row_ids: Array<{ _id: string }> }>().row_ids.map((r) => r._id);
}

export async function listRows(g: Gateway, query: string): Promise<Array<Record<string, unknown>>> {
  const res = await g.call('GET', `rows/?${query}`);
  if (res.statusCode !== 200) throw new Error(`list failed: ${res.body}`);
  return res.json<{ rows: Array<Record<string, unknown>> }>().rows;
}

/** Count of rows stored for the base, read directly from the database. */
export async function storedRowCount(g: Gateway): Promise<number> {
  const row = await g.t.container.db
    .selectFrom('base_rows')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('base_id', '=', g.base.id)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function eventCount(g: Gateway): Promise<number> {
  const row = await g.t.container.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('base_id', '=', g.base.id)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A trigger that makes the database refuse every event row named `rowName`: one part of a write
 * failing after the others were sent. Returns its removal.
 */
export async function refuseEventsNamed(db: Kysely<Database>, dialect: DialectName, rowName = 'refused'): Promise<() => Promise<void>> {
  if (dialect === 'postgres') {
    await sql`CREATE OR REPLACE FUNCTION refuse_event() RETURNS trigger AS $$ BEGIN IF NEW.row_name = ${sql.lit(rowName)} THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`.execute(db);
    await sql`CREATE TRIGGER refuse_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_event()`.execute(db);
  } else {
    await sql`CREATE TRIGGER refuse_event BEFORE INSERT ON events WHEN NEW.row_name = ${sql.lit(rowName)} BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`.execute(db);
  }
  return async () => {
    await sql`DROP TRIGGER refuse_event${sql.raw(dialect === 'postgres' ? ' ON events' : '')}`.execute(db);
  };
}

/** Uploads `bytes` as file `name` to the base's assets through the console's upload link; returns the file's path in the base. */
export async function uploadAsset(t: TestApp, g: Gateway, name: string, bytes: string): Promise<string> {
  const link = await t.request({ method: 'GET', url: `/api/v2.1/workspace/${g.base.workspaceId}/dtable-asset-upload-link/?name=${encodeURIComponent(g.base.name)}`, token: g.owner.token });
  const { upload_link, parent_path, file_relative_path } = link.json();
  const body = multipart([{ name: 'parent_dir', value: parent_path }, { name: 'relative_path', value: file_relative_path }, { name: 'file', value: bytes, filename: name }]);
  const res = await t.request({ method: 'POST', url: `${upload_link.replace('http://basegate.test', '')}?ret-json=1`, ...body });
  if (res.statusCode !== 200) throw new Error(`upload failed: ${res.statusCode} ${res.body}`);
  return `${file_relative_path}/${res.json()[0].name}`;
}

/**
 * A test app with a table `T` of `tiedRows`' columns (Name, N, Label) and then `extra`, rate limits off
 * (the listing-order suites read it many times).
 */
export function appWithTiedTable(dialect: DialectName, extra: NewColumn[] = []): Promise<{ t: TestApp; g: Gateway }> {
  return appWithTable(dialect, { RATE_LIMIT_BASE_PER_MINUTE: '0', RATE_LIMIT_ACCOUNT_PER_MINUTE: '0' }, [
    { column_name: 'Name', column_type: 'text' },
    { column_name: 'N', column_type: 'number' },
    { column_name: 'Label', column_type: 'text' },
    ...extra,
  ]);
}

/**
 * Rows for listing-order tests: Name `r0`…, N with many ties (6 values, one negative) and empty cells,
 * Label with case, accents, a space and empty cells.
 */
export function tiedRows(count: number): Array<Record<string, unknown>> {
  const labels = ['b', 'B', 'a', 'é', 'a b', 'Z'];
  return Array.from({ length: count }, (_, i) => ({
    Name: `r${i}`,
    ...(i % 9 === 4 ? {} : { N: (i * 7) % 6 === 5 ? -1.5 : (i * 7) % 6 }),
    ...(i % 5 === 2 ? {} : { Label: labels[i % labels.length] }),
  }));
}
