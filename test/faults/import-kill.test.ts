import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/index.js';
import { ADMIN, killHard, serverEnv, startServerProcess, waitUntil, type ServerProcess } from './processes.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

const ROWS = 20_000;
const csv = (prefix: string, rows = ROWS) => ['Name', ...Array.from({ length: rows }, (_, i) => `${prefix} ${i}`)].join('\n');

/** Counts read straight from the server's database (its SQLite file, or its PostgreSQL schema). */
async function databaseReader(dialect: 'sqlite' | 'postgres', dataDir: string, env: NodeJS.ProcessEnv) {
  if (dialect === 'sqlite') {
    const db = new Database(path.join(dataDir, 'basegate.sqlite3'), { readonly: true, fileMustExist: true });
    cleanup.push(async () => db.close());
    return async (query: string) => Number((db.prepare(query).get() as { n: number | bigint }).n);
  }
  const client = new pg.Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  cleanup.push(() => client.end());
  return async (query: string) => Number((await client.query<{ n: string }>(query)).rows[0]!.n);
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/** The admin's Account-Token, a new base, its workspace and a Base-Token for it. */
async function baseOn(server: ServerProcess) {
  const { token } = await json<{ token: string }>(
    await fetch(`${server.url}/api2/auth-token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ADMIN.email, password: ADMIN.password }) }),
  );
  const auth = { authorization: `Token ${token}` };
  const { table } = await json<{ table: { workspace_id: number; uuid: string } }>(
    await fetch(`${server.url}/api/v2.1/dtables/`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'import-kill' }) }),
  );
  const { access_token } = await json<{ access_token: string }>(await fetch(`${server.url}/api/v2.1/workspace/${table.workspace_id}/dtable/import-kill/access-token/`, { headers: auth }));
  return { auth, workspaceId: table.workspace_id, uuid: table.uuid, baseToken: access_token };
}

/**
 * Starts an import whose answer should never come (the process is killed mid-way). `answered` holds the
 * answer if one comes before the kill, so the wait below fails at once with it instead of timing out.
 */
function startImport(server: ServerProcess, base: Awaited<ReturnType<typeof baseOn>>, op: string, fields: Record<string, string>, name: string, content: string) {
  const form = new FormData();
  for (const [k, v] of Object.entries({ dtable_uuid: base.uuid, ...fields })) form.append(k, v);
  form.append('file', new Blob([content]), name);
  const state: { answered: string | null } = { answered: null };
  void fetch(`${server.url}/api/v2.1/workspace/${base.workspaceId}/synchronous-import/${op}/`, { method: 'POST', headers: base.auth, body: form }).then(
    async (res) => (state.answered = `${op} answered ${res.status} ${(await res.text()).slice(0, 300)}`),
    () => undefined, // the connection ends with the process: expected
  );
  return state;
}

/**
 * Issue 27.1: a server killed with SIGKILL while two imports run (an append to an existing table and a
 * new table from a file) leaves their batches written so far — staged rows, held events, job records.
 * The next start undoes both before it listens: no staged row, held event or job is left, the new table
 * never appears (it was staged, in no metadata) and the rows stored under its id are deleted, the existing table has exactly its rows from before, and
 * no event of the imports was published.
 */
describe.each(DIALECTS)('an import killed mid-way (%s)', (dialect) => {
  it('is undone when the server starts again, leaving nothing half-written', async () => {
    const { env, dataDir, drop } = await serverEnv(dialect);
    cleanup.push(drop);
    const first = await startServerProcess(env);
    cleanup.push(() => killHard(first));
    const base = await baseOn(first);
    const gateway = `${first.url}/api-gateway/api/v2/dtables/${base.uuid}`;
    const rowsBefore = (await json<{ rows: unknown[] }>(await fetch(`${gateway}/rows/?table_name=Table1`, { headers: { authorization: `Token ${base.baseToken}` } }))).rows.length;
    const count = await databaseReader(dialect, dataDir, env);

    // One import after the other has written a batch, the first 25 times as long: started together, the
    // append once wrote all its 20 batches before the new table's first (its upload and first pass were
    // slower on a loaded machine), and the kill came after one import had ended; at five times as long,
    // the new table's 100,000 rows once all went in before the append's first batch. The kill comes as
    // soon as both have written a batch, so the length costs nothing.
    const imports: Array<ReturnType<typeof startImport>> = [];
    const holds = (n: number, what: string) =>
      waitUntil(
        async () => {
          const answered = imports.find((i) => i.answered !== null);
          if (answered) throw new Error(`an import ended before both had written a batch: ${answered.answered}`);
          return (await count('select count(distinct hold_id) as n from held_event_batches')) === n;
        },
        what,
        90_000,
      );
    imports.push(startImport(first, base, 'import-excel-csv-to-table', {}, 'fresh.csv', csv('fresh', ROWS * 25)));
    await holds(1, 'the new table’s import to have written a batch');
    imports.push(startImport(first, base, 'append-excel-csv-to-table', { table_name: 'Table1' }, 'more.csv', csv('appended')));
    // Both imports have written batches: two job records, held event batches of two holds.
    await holds(2, 'both imports to have written a batch');
    await killHard(first);

    expect(await count('select count(*) as n from import_jobs')).toBe(2);
    // The append's rows are staged (`~…`); the new table's are under its own id, which no metadata lists.
    expect(await count("select count(*) as n from base_rows where table_id like '~%'")).toBeGreaterThanOrEqual(1000);
    expect(await count("select count(*) as n from base_rows where table_id not like '~%' and table_id <> '0000'")).toBeGreaterThanOrEqual(1000);
    expect(await count("select count(*) as n from import_jobs where created_tables like '%staged%'")).toBe(1);
    expect(await count('select count(*) as n from held_event_batches')).toBeGreaterThanOrEqual(2);
    expect(await count("select count(*) as n from structure_events where op like '%insert_table%'")).toBe(0);

    const second = await startServerProcess(env);
    cleanup.push(() => killHard(second));
    expect(second.output()).toMatch(/undid imports interrupted by a stop of their process/);
    expect(await count('select count(*) as n from import_jobs')).toBe(0);
    expect(await count("select count(*) as n from base_rows where table_id <> '0000'")).toBe(0);
    expect(await count('select count(*) as n from held_events')).toBe(0);
    expect(await count('select count(*) as n from held_event_batches')).toBe(0);
    expect(await count('select count(*) as n from held_event_columns')).toBe(0);
    expect(await count("select count(*) as n from events where row_name like 'appended %' or row_name like 'fresh %'")).toBe(0);
    const headers = { authorization: `Token ${base.baseToken}` };
    const again = `${second.url}/api-gateway/api/v2/dtables/${base.uuid}`;
    const tables = (await json<{ metadata: { tables: Array<{ name: string }> } }>(await fetch(`${again}/metadata/`, { headers }))).metadata.tables.map((x) => x.name);
    expect(tables).toEqual(['Table1']);
    expect((await json<{ rows: unknown[] }>(await fetch(`${again}/rows/?table_name=Table1`, { headers }))).rows).toHaveLength(rowsBefore);
    // The base takes a new import at once (its stage codes are free again).
    const form = new FormData();
    form.append('dtable_uuid', base.uuid);
    form.append('table_name', 'Table1');
    form.append('file', new Blob(['Name\nafter restart']), 'after.csv');
    const res = await fetch(`${second.url}/api/v2.1/workspace/${base.workspaceId}/synchronous-import/append-excel-csv-to-table/`, { method: 'POST', headers: base.auth, body: form });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await json<{ rows: unknown[] }>(await fetch(`${again}/rows/?table_name=Table1`, { headers }))).rows).toHaveLength(rowsBefore + 1);
  }, 240_000);
});
