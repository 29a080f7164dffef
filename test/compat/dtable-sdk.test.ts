import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createTestApp, type TestApp } from '../helpers/index.js';
import { addTable, appendRows, gateway, listRows, readOnlyToken, storedRowCount, type Gateway } from '../http/rows.fixtures.js';
import { joined, listen, settle, waitFor, type LiveClient } from '../realtime/live.support.js';

/*
 * The original's JavaScript SDK (`dtable-sdk`, what its plugins and scripts are built on) end to end against a
 * listening server (issue #26 item 2): `init({server, APIToken})`, `syncWithServer()` (whole-base read,
 * related users, departments, the live connection), reading tables, views and rows, adding and modifying rows
 * through its live connection, and others' changes arriving over it.
 */
const require = createRequire(import.meta.url);
type Row = Record<string, unknown> & { _id: string };
interface Table { _id: string; name: string; rows: Row[]; columns: Array<{ key: string; name: string }> }
interface DTable {
  init(config: { server: string; APIToken: string }): Promise<void>;
  syncWithServer(): Promise<void>;
  getTables(): Table[];
  getViews(table: Table): Array<{ _id: string; name: string }>;
  getRelatedUsers(): Array<{ email: string }>;
  getViewRows(view: object, table: Table): Row[];
  appendRow(table: Table, row: Record<string, unknown>, view?: object): void;
  modifyRow(table: Table, row: Row, updated: Record<string, unknown>): void;
  forEachRow(tableName: string, viewName: string, callback: (row: Row) => void): void;
  subscribe(event: string, fn: (...args: unknown[]) => void): () => void;
  // `socketConnected` turns true when the server acknowledges the client's `join-room`, not at the socket's connect.
  dtableStore: { value: { tables: Table[]; version: number }; socketConnected?: boolean; socketClient?: { socket: { close(): void; connected: boolean } } };
}
/** Polls an asynchronous check every 20 ms until it holds (8 s at most). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const until = Date.now() + 8000;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const DTableClass = (require('dtable-sdk') as { default: new () => DTable }).default;

describe.each(DIALECTS)('dtable-sdk against a listening server (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let dtable: DTable;
  let server: string;
  let observer: LiveClient;
  const intervals: NodeJS.Timeout[] = [];
  const tasksTable = () => dtable.getTables().find((table) => table.name === 'Tasks')!;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    server = await listen(t);
    t.container.dispatcher.start();
    g = await gateway(t);
    await addTable(g, 'Tasks', [
      { column_name: 'Title', column_type: 'text' },
      { column_name: 'Size', column_type: 'number' },
    ]);
    await appendRows(g, 'Tasks', [{ Title: 'first', Size: 1 }, { Title: 'second', Size: 2 }]);
    const created = await t.request({ method: 'POST', url: basePath(g.base, 'api-tokens/'), token: g.owner.token, payload: { app_name: 'sdk', permission: 'rw' } });
    expect(created.statusCode, created.body).toBe(201);
    dtable = new DTableClass();
    await dtable.init({ server, APIToken: created.json<{ api_token: string }>().api_token });
    // syncWithServer starts a 3-day token refresh interval; keep its handle to stop it after the test.
    const setIntervalReal = globalThis.setInterval;
    globalThis.setInterval = ((fn: () => void, ms: number) => {
      const handle = setIntervalReal(fn, ms);
      intervals.push(handle);
      return handle;
    }) as typeof setInterval;
    try {
      await dtable.syncWithServer();
    } finally {
      globalThis.setInterval = setIntervalReal;
    }
    observer = await joined(server, g.base.uuid, g.token);
  });
  afterAll(async () => {
    for (const handle of intervals) clearInterval(handle);
    dtable?.dtableStore?.socketClient?.socket.close();
    observer?.close();
    await t?.close();
  });

  it('loads the base: tables, views, rows and related users', async () => {
    const names = dtable.getTables().map((table) => table.name);
    expect(names).toContain('Tasks');
    const tasks = tasksTable();
    const view = dtable.getViews(tasks)[0]!;
    expect(view.name).toBeTruthy();
    const titles: unknown[] = [];
    dtable.forEachRow('Tasks', view.name, (row) => titles.push(row.Title));
    expect(titles).toEqual(['first', 'second']);
    expect(dtable.getRelatedUsers().map((u) => u.email)).toEqual([g.owner.virtualId]);
  });

  it('receives others’ changes over its live connection', async () => {
    // Wait for the room, not only the socket: a change made before the join is not sent to the client.
    await waitFor(() => dtable.dtableStore.socketConnected === true, 'the live connection to join the base');
    await appendRows(g, 'Tasks', [{ Title: 'from elsewhere', Size: 3 }]);
    await waitFor(() => tasksTable().rows.length === 3, 'the remote insert');
    const tasks = tasksTable();
    const titleKey = tasks.columns.find((c) => c.name === 'Title')!.key;
    expect(tasks.rows.map((r) => r[titleKey])).toEqual(['first', 'second', 'from elsewhere']);
  });

  it('adds and modifies rows through its live connection; the server stores them', async () => {
    const tasks = tasksTable();
    dtable.appendRow(tasks, { Title: 'by the sdk', Size: 4 });
    await eventually(async () => (await listRows(g, 'table_name=Tasks&convert_keys=true')).some((row) => row.Title === 'by the sdk'), 'the insert stored');
    const added = tasksTable().rows.at(-1)!;
    dtable.modifyRow(tasksTable(), added, { Title: 'changed by the sdk' });
    await eventually(async () => (await listRows(g, 'table_name=Tasks&convert_keys=true')).some((row) => row.Title === 'changed by the sdk'), 'the change stored');
    const stored = await listRows(g, 'table_name=Tasks&convert_keys=true');
    expect(stored.map((row) => [row.Title, row.Size])).toEqual([
      ['first', 1],
      ['second', 2],
      ['from elsewhere', 3],
      ['changed by the sdk', 4],
    ]);
    // Others see the SDK's insert and change; the SDK itself gets no echo of them (its row is not doubled).
    const sdkRowId = added._id;
    await waitFor(() => observer.messages('update-dtable').some((op) => (op as { op_type: string; row_id?: string }).op_type === 'modify_row' && (op as { row_id: string }).row_id === sdkRowId), 'the observer sees the change');
    expect(observer.messages('update-dtable').some((op) => JSON.stringify(op).includes(sdkRowId) && (op as { op_type: string }).op_type.startsWith('insert_row'))).toBe(true);
    await settle(300);
    expect(tasksTable().rows.map((r) => r._id).filter((id) => id === sdkRowId)).toHaveLength(1);
    expect(tasksTable().rows.length).toBe(4);
  });

  it('refuses operations from a read-only token, of unknown types, or naming a taken row id; nothing is written', async () => {
    const before = await listRows(g, 'table_name=Tasks&convert_keys=true');
    const tableId = tasksTable()._id;
    const titleKey = tasksTable().columns.find((c) => c.name === 'Title')!.key;
    const send = (c: LiveClient, op: object) => c.socket.timeout(8000).emitWithAck('update-dtable', g.base.uuid, JSON.stringify(op)) as Promise<{ status: boolean; message?: string }>;
    const insert = { op_type: 'insert_row', table_id: tableId, row_id: '', row_insert_position: 'insert_below', row_data: { _id: 'AAAAAAAAAAAAAAAAAAAAAA', [titleKey]: 'refused' } };
    const reader = await joined(server, g.base.uuid, await readOnlyToken(g));
    try {
      expect(await send(reader, insert)).toEqual({ status: false, message: "You don't have permission to perform this operation on this base." });
    } finally {
      reader.close();
    }
    expect(await send(observer, { op_type: 'insert_column', table_id: tableId })).toMatchObject({ status: false, message: expect.stringContaining('insert_column is not supported') });
    const taken = { ...insert, row_data: { ...insert.row_data, _id: before[0]!._id } };
    expect(await send(observer, taken)).toEqual({ status: false, message: 'The row inserted is exist.' });
    expect(await send(observer, { ...insert, row_data: { ...insert.row_data, _id: 'short' } })).toEqual({ status: false, message: 'row _id invalid.' });
    expect(await listRows(g, 'table_name=Tasks&convert_keys=true')).toEqual(before);
  });

  it('a client’s own operation is not echoed back to it; the others get it', async () => {
    const tableId = tasksTable()._id;
    const titleKey = tasksTable().columns.find((c) => c.name === 'Title')!.key;
    const writer = await joined(server, g.base.uuid, g.token);
    try {
      const rowId = 'BBBBBBBBBBBBBBBBBBBBBB';
      const op = { op_type: 'insert_row', table_id: tableId, row_id: '', row_insert_position: 'insert_below', row_data: { _id: rowId, [titleKey]: 'raw' } };
      expect(await writer.socket.timeout(8000).emitWithAck('update-dtable', g.base.uuid, JSON.stringify(op))).toEqual({ status: true });
      const mentions = (c: LiveClient) => c.messages('update-dtable').filter((m) => JSON.stringify(m).includes(rowId)).length;
      await waitFor(() => mentions(observer) === 1, 'the observer gets the insert');
      await settle(300);
      expect(mentions(writer)).toBe(0);
    } finally {
      writer.close();
    }
  });
});

describe.each(DIALECTS)('live operations spend the base’s rate limit (%s)', (dialect) => {
  let t: TestApp;

  afterAll(async () => {
    await t?.close();
  });

  it('the operation past RATE_LIMIT_BASE_PER_MINUTE is refused and writes nothing', async () => {
    t = await createTestApp(dialect, { RATE_LIMIT_BASE_PER_MINUTE: '3' });
    const server = await listen(t);
    const g = await gateway(t);
    const table = await addTable(g, 'Tasks', [{ column_name: 'Title', column_type: 'text' }]);
    const before = await storedRowCount(g);
    const c = await joined(server, g.base.uuid, g.token);
    try {
      const answers: Array<{ status: boolean; message?: string }> = [];
      for (const id of ['CCCCCCCCCCCCCCCCCCCCC1', 'CCCCCCCCCCCCCCCCCCCCC2', 'CCCCCCCCCCCCCCCCCCCCC3', 'CCCCCCCCCCCCCCCCCCCCC4']) {
        const op = { op_type: 'insert_row', table_id: table._id, row_id: '', row_insert_position: 'insert_below', row_data: { _id: id, [table.columns[0]!.key]: id } };
        answers.push(await c.socket.timeout(8000).emitWithAck('update-dtable', g.base.uuid, JSON.stringify(op)));
      }
      const refused = answers.filter((a) => !a.status);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused[0]!.message).toMatch(/rate limit/);
      expect(answers[0]).toEqual({ status: true });
      expect((await storedRowCount(g)) - before).toBe(answers.length - refused.length);
    } finally {
      c.close();
    }
  });
});
