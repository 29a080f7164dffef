import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createTestApp, type TestApp } from '../helpers/index.js';
import { multipart } from '../helpers/asset-fixtures.js';
import { addTable, appendRows, gateway, listRows, through, type Gateway } from './rows.fixtures.js';

const csv = (from: number, count: number) => ['Name,Points', ...Array.from({ length: count }, (_, i) => `task ${from + i},${from + i}`)].join('\n');

/**
 * Issue 27.2: the rows of an import are invisible until the import commits — to the rows API, the
 * whole-base read, SQL, export, a base copy and the outbox (so webhooks, rules and the live channel) —
 * and appear together with their events. The import is paused between its batches (after two of its
 * three batches are committed) by wrapping the rows service's append the import writes through.
 */
describe.each(DIALECTS)('import rows invisible until it commits (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  /** When set, the import's `pauseAfter`-th batch waits here after its commit. */
  let gate: { pauseAfter: number; reached: () => void; release: Promise<void> } | null = null;
  let batches = 0;

  /**
   * Rows of `table`, or with 'staged' the rows stored outside every listed table: an append's staged rows
   * (`~…` ids) and a new table's rows under its id before the publish lists it (trashed tables' kept rows aside).
   */
  const count = async (table: string, where: 'staged' | 'all' = 'all') => {
    let q = t.container.db.selectFrom('base_rows').select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', '=', g.base.id);
    if (where === 'staged') {
      const listed = (await t.container.baseData.writer.read(g.base)).tables.map((x) => x._id);
      const trashed = (await t.container.db.selectFrom('trashed_tables').select('table_id').where('base_id', '=', g.base.id).execute()).map((r) => r.table_id);
      q = q.where('table_id', 'not in', [...listed, ...trashed]);
    } else q = q.where('table_id', '=', table);
    return Number((await q.executeTakeFirstOrThrow()).n);
  };
  const importEvents = async () =>
    Number((await t.container.db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', '=', g.base.id).where('row_name', 'like', 'task %').executeTakeFirstOrThrow()).n);
  const jobs = async () => Number((await t.container.db.selectFrom('import_jobs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const heldUpdates = async () => Number((await t.container.db.selectFrom('held_updates').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const modifyEvents = async (table: string, names: string[]) =>
    t.container.db.selectFrom('events').select(['row_name', 'row_data']).where('base_id', '=', g.base.id).where('table_name', '=', table).where('op_type', '=', 'modify_row').where('row_name', 'in', names).orderBy('id').execute();
  const held = async () => {
    let n = 0;
    for (const table of ['held_events', 'held_event_batches', 'held_event_columns', 'held_updates'] as const) {
      n += Number((await t.container.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    }
    return n;
  };
  const send = (op: string, content: string, fields: Record<string, string>, filename = 'tasks.csv') => {
    const body = multipart([
      ...Object.entries({ dtable_uuid: g.base.uuid, ...fields }).map(([n, value]) => ({ name: n, value })),
      { name: 'file', value: content, filename },
    ]);
    return t.request({ method: 'POST', url: `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-import/${op}/`, token: g.owner.token, ...body });
  };
  /** Starts an import and resolves once `after` of its three batches are committed and it waits for `go`. */
  async function pausedImport(op: string, fields: Record<string, string>, after = 2, content = csv(0, 2500), filename?: string) {
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let go!: () => void;
    gate = { pauseAfter: batches + after, reached, release: new Promise<void>((resolve) => (go = resolve)) };
    const answer = send(op, content, fields, filename);
    await Promise.race([atGate, answer.then((res) => Promise.reject(new Error(`import ended before the pause: ${res.body}`)))]);
    return { answer, go };
  }

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Tasks', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Points', column_type: 'number' },
    ]);
    await appendRows(g, 'Tasks', [{ Name: 'kept', Points: 1 }]);
    const rows = t.container.baseData.rows;
    const append = rows.append.bind(rows);
    rows.append = async (...args: Parameters<typeof append>) => {
      const result = await append(...args);
      if (args[3] !== undefined) {
        batches++;
        if (gate && batches === gate.pauseAfter) {
          const { reached, release } = gate;
          gate = null;
          reached();
          await release;
        }
      }
      return result;
    };
  }, 60_000);
  afterAll(() => t?.close());

  it('rows API, whole-base read, SQL, export, a base copy and the outbox see none of an unfinished import, then all of it', async () => {
    const tableId = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'Tasks')._id as string;
    const { answer, go } = await pausedImport('append-excel-csv-to-table', { table_name: 'Tasks' });

    // 2000 rows are committed, staged: stored, but outside every table.
    expect(await count(tableId, 'staged')).toBe(2000);
    expect(await count(tableId)).toBe(1);
    expect(await jobs()).toBe(1);
    expect((await listRows(g, 'table_name=Tasks&convert_keys=true')).map((r) => r.Name)).toEqual(['kept']);
    const whole = (await g.call('GET', '')).json();
    expect(whole.tables.find((x: { name: string }) => x.name === 'Tasks').rows).toHaveLength(1);
    const sql = await g.call('POST', 'sql/', { sql: 'SELECT COUNT(*) AS n FROM Tasks', convert_keys: true });
    expect(sql.statusCode, sql.body).toBe(200);
    expect(sql.json().results).toEqual([{ n: 1 }]);
    const exported = await t.request({
      method: 'GET',
      url: `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-export/export-table-to-excel/?dtable_name=${encodeURIComponent(g.base.name)}&table_name=Tasks&format=csv`,
      token: g.owner.token,
    });
    expect(exported.statusCode).toBe(200);
    expect(exported.body.trim().split(/\r?\n/)).toHaveLength(2); // header and `kept`
    const copy = await t.request({ method: 'POST', url: '/api/v2.1/dtable-copy/', token: g.owner.token, payload: { src_workspace_id: g.base.workspaceId, dst_workspace_id: g.base.workspaceId, name: g.base.name } });
    expect(copy.statusCode, copy.body).toBe(200);
    const copied = await t.container.db.selectFrom('bases').select('id').where('uuid', '=', copy.json().dtable.uuid).executeTakeFirstOrThrow();
    const copiedRows = await t.container.db.selectFrom('base_rows').select(['table_id']).where('base_id', '=', copied.id).execute();
    expect(copiedRows.filter((r) => r.table_id.startsWith('~'))).toEqual([]);
    expect(copiedRows.filter((r) => r.table_id === tableId)).toHaveLength(1);
    expect(await importEvents()).toBe(0);

    go();
    const res = await answer;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ success: true, appended: 2500 });
    expect(await count(tableId, 'staged')).toBe(0);
    expect(await count(tableId)).toBe(2501);
    expect(await importEvents()).toBe(2500);
    expect(await jobs()).toBe(0);
    // The cached whole-base read and the listing see the published rows at once (the revision moved).
    expect((await g.call('GET', '')).json().tables.find((x: { name: string }) => x.name === 'Tasks').rows).toHaveLength(2501);
    expect((await listRows(g, 'table_name=Tasks&start=2500&limit=5&convert_keys=true')).map((r) => r.Name)).toEqual(['task 2499']);
  }, 90_000);

  it('a table deleted after the last batch, before the release: the import is a 400 and leaves no staged row, event, held event or job', async () => {
    await addTable(g, 'Doomed', [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Points', column_type: 'number' },
    ]);
    const before = await importEvents();
    const { answer, go } = await pausedImport('append-excel-csv-to-table', { table_name: 'Doomed' }, 3);
    expect(await count('', 'staged')).toBe(2500);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Doomed' })).statusCode).toBe(200);
    go();
    const res = await answer;
    expect(res.statusCode).toBe(400);
    expect(res.json().error_msg).toMatch(/was deleted during the import/);
    expect(await count('', 'staged')).toBe(0);
    expect(await importEvents()).toBe(before);
    expect(await held()).toBe(0);
    expect(await jobs()).toBe(0);
  }, 90_000);

  it('a table deleted between batches: the next batch finds no table (404) and the import leaves nothing', async () => {
    await addTable(g, 'Gone', [{ column_name: 'Name', column_type: 'text' }]);
    const { answer, go } = await pausedImport('append-excel-csv-to-table', { table_name: 'Gone' }, 1);
    expect((await g.call('DELETE', 'tables/', { table_name: 'Gone' })).statusCode).toBe(200);
    go();
    const res = await answer;
    expect(res.statusCode).toBe(404);
    expect(await count('', 'staged')).toBe(0);
    expect(await held()).toBe(0);
    expect(await jobs()).toBe(0);
  }, 90_000);

  const structureEvents = async (baseId = g.base.id) =>
    Number((await t.container.db.selectFrom('structure_events').select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', '=', baseId).executeTakeFirstOrThrow()).n);
  const tableNames = async () => ((await g.call('GET', 'metadata/')).json().metadata.tables as Array<{ name: string }>).map((x) => x.name);

  /**
   * Reads the base as a client polling it would, over and over until stopped: each time the metadata
   * lists `table`, the rows API's count of it right after. Returns what it saw.
   */
  function poll(table: string) {
    const seen: Array<number | 'absent'> = [];
    let running = true;
    const done = (async () => {
      while (running) {
        if (!(await tableNames()).includes(table)) seen.push('absent');
        else seen.push((await g.call('GET', `rows/?table_name=${table}&limit=1000&start=2000`)).json().rows.length + 2000);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    return { seen, stop: async () => ((running = false), await done) };
  }

  it('a new table from a file exists for no reader until the import commits, then with all its rows', async () => {
    const [structure, events] = [await structureEvents(), await importEvents()];
    const poller = poll('fresh');
    const { answer, go } = await pausedImport('import-excel-csv-to-table', {}, 2, csv(0, 2500), 'fresh.csv');

    // Two batches are in (2000 staged rows); the table is in no metadata, read, listing or event.
    expect(await count('', 'staged')).toBe(2000);
    expect(await tableNames()).not.toContain('fresh');
    expect((await g.call('GET', '')).json().tables.map((x: { name: string }) => x.name)).not.toContain('fresh');
    expect((await g.call('GET', 'rows/?table_name=fresh')).statusCode).toBe(404);
    expect((await g.call('POST', 'sql/', { sql: 'SELECT COUNT(*) AS n FROM fresh', convert_keys: true })).statusCode).toBe(400);
    expect(await structureEvents()).toBe(structure); // so no webhook, automation or live client heard of it
    expect(await importEvents()).toBe(events);

    go();
    const res = await answer;
    expect(res.statusCode, res.body).toBe(200);
    for (let i = 0; i < 200 && !poller.seen.includes(2500); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await poller.stop();
    // The poller saw the table either not at all or with every row, never empty or part-filled.
    expect(poller.seen).toContain('absent');
    expect(poller.seen).toContain(2500);
    expect(poller.seen.filter((n) => n !== 'absent' && n !== 2500)).toEqual([]);
    const meta = (await g.call('GET', 'metadata/')).json().metadata.tables as Array<{ name: string; _id: string; columns: Array<{ name: string; type: string }> }>;
    const created = meta.find((x) => x.name === 'fresh')!;
    expect(created.columns.map((c) => `${c.name}:${c.type}`)).toEqual(['Name:text', 'Points:number']);
    expect(await count(created._id)).toBe(2500);
    expect(await count('', 'staged')).toBe(0);
    expect(await jobs()).toBe(0);
    // The table's structure event comes before its rows' events in the order consumers read them.
    const made = await t.container.db.selectFrom('structure_events').select(['op', 'after_event_id']).where('base_id', '=', g.base.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(JSON.parse(made.op)).toMatchObject({ op_type: 'insert_table', table_data: { _id: created._id, name: 'fresh' } });
    const firstRow = await t.container.db.selectFrom('events').select((eb) => eb.fn.min('id').as('id')).where('base_id', '=', g.base.id).where('table_name', '=', 'fresh').executeTakeFirstOrThrow();
    expect(Number(made.after_event_id)).toBeLessThan(Number(firstRow.id));
    expect(await structureEvents()).toBe(structure + 1);
  }, 90_000);

  it('a table of the same name made during the import: the import is a 400 at its publish and leaves no table, row or event of it', async () => {
    const before = await importEvents();
    const { answer, go } = await pausedImport('import-excel-csv-to-table', {}, 3, csv(0, 2500), 'clash.csv');
    await addTable(g, 'clash', [{ column_name: 'Title', column_type: 'text' }]);
    go();
    const res = await answer;
    expect(res.statusCode).toBe(400);
    expect(res.json().error_msg).toMatch(/was created during the import/);
    const clash = ((await g.call('GET', 'metadata/')).json().metadata.tables as Array<{ name: string; columns: Array<{ name: string }> }>).filter((x) => x.name === 'clash');
    expect(clash.map((x) => x.columns.map((c) => c.name))).toEqual([['Title']]);
    expect(await count('', 'staged')).toBe(0);
    expect(await importEvents()).toBe(before);
    expect(await held()).toBe(0);
    expect(await jobs()).toBe(0);
  }, 90_000);

  it('a new base from a file shows only its blank table until the import commits, then only the file\'s', async () => {
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let go!: () => void;
    gate = { pauseAfter: batches + 2, reached, release: new Promise<void>((resolve) => (go = resolve)) };
    const body = multipart([{ name: 'dtable', value: csv(0, 2500), filename: 'Imported base.csv' }]);
    const answer = t.request({ method: 'POST', url: `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-import/import-excel-csv-to-base/`, token: g.owner.token, ...body });
    await Promise.race([atGate, answer.then((res) => Promise.reject(new Error(`import ended before the pause: ${res.body}`)))]);

    const row = await t.container.db.selectFrom('bases').select(['id', 'uuid']).where('name', '=', 'Imported base').executeTakeFirstOrThrow();
    const base = { id: Number(row.id), uuid: row.uuid };
    const blank = await t.container.baseData.writer.read(base);
    expect(blank.tables.map((x) => x.name)).toEqual(['Table1']);
    const structure = await structureEvents(base.id);

    go();
    const res = await answer;
    expect(res.statusCode, res.body).toBe(200);
    const meta = await t.container.baseData.writer.read(base);
    expect(meta.tables.map((x) => x.name)).toEqual(['Imported base']);
    const rows = await t.container.db.selectFrom('base_rows').select(['table_id']).where('base_id', '=', base.id).execute();
    expect(rows.length).toBe(2500);
    expect(new Set(rows.map((r) => r.table_id))).toEqual(new Set([meta.tables[0]!._id]));
    // One commit: the file's table added, the blank one removed.
    expect(await structureEvents(base.id)).toBe(structure + 2);
    expect(await jobs()).toBe(0);
  }, 90_000);

  /** Starts a new-base import of `filename`, paused after two of its three batches; the new base and a gateway to it. */
  async function pausedNewBase(filename: string) {
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let go!: () => void;
    gate = { pauseAfter: batches + 2, reached, release: new Promise<void>((resolve) => (go = resolve)) };
    const body = multipart([{ name: 'dtable', value: csv(0, 2500), filename }]);
    const answer = t.request({ method: 'POST', url: `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-import/import-excel-csv-to-base/`, token: g.owner.token, ...body });
    await Promise.race([atGate, answer.then((res) => Promise.reject(new Error(`import ended before the pause: ${res.body}`)))]);
    const row = await t.container.db.selectFrom('bases').select(['id', 'uuid', 'name', 'workspace_id']).where('name', '=', filename.replace(/\.csv$/, '')).executeTakeFirstOrThrow();
    const base = { id: Number(row.id), uuid: row.uuid, name: row.name, workspaceId: Number(row.workspace_id) };
    const gw = through(t, { owner: g.owner, base, token: await baseToken(t, g.owner, base) });
    return { answer, go, base, gw };
  }

  it('a new base: rows written into its blank table during the import are kept (the table stays beside the file\'s)', async () => {
    const { answer, go, base, gw } = await pausedNewBase('Worked in.csv');
    const written = await gw.call('POST', 'rows/', { table_name: 'Table1', rows: [{ Name: 'mine' }] });
    expect(written.statusCode, written.body).toBe(200);
    go();
    const res = await answer;
    expect(res.statusCode, res.body).toBe(200);
    const meta = await t.container.baseData.writer.read(base);
    expect(meta.tables.map((x) => x.name)).toEqual(['Table1', 'Worked in']);
    expect((await listRows(gw, 'table_name=Table1&convert_keys=true')).map((r) => r.Name)).toContain('mine');
    expect(await listRows(gw, 'table_name=Worked%20in&limit=1000&start=2000')).toHaveLength(500);
    expect(await jobs()).toBe(0);
  }, 90_000);

  it('a new base: a blank table someone changed keeps its work and makes way by name for an import table of its name', async () => {
    const { answer, go, base, gw } = await pausedNewBase('Table1.csv');
    const added = await gw.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Notes', column_type: 'text' });
    expect(added.statusCode, added.body).toBe(200);
    go();
    const res = await answer;
    expect(res.statusCode, res.body).toBe(200);
    const meta = await t.container.baseData.writer.read(base);
    expect(meta.tables.map((x) => `${x._id === '0000' ? 'blank' : 'file'}:${x.name}`)).toEqual(['blank:Table1 (2)', 'file:Table1']);
    expect(meta.tables[0]!.columns.map((c) => c.name)).toEqual(['Name', 'Notes']);
    expect(await listRows(gw, 'table_name=Table1&limit=1000&start=2000')).toHaveLength(500);
    // The rename reached consumers as a structure event.
    const ops = await t.container.db.selectFrom('structure_events').select('op').where('base_id', '=', base.id).execute();
    expect(ops.map((o) => JSON.parse(o.op))).toContainEqual(expect.objectContaining({ op_type: 'rename_table', table_id: '0000', table_name: 'Table1 (2)' }));
  }, 90_000);

  /** 2,499 file rows (three batches): `first` (in the first batch) and `last` (in the third) update existing rows, the rest append. */
  const keyedFile = ['Name,Points', 'first,10', ...Array.from({ length: 2497 }, (_, i) => `task ${i},${i}`), 'last,20'].join('\n');
  const keyedTable = async (name: string) => {
    await addTable(g, name, [
      { column_name: 'Name', column_type: 'text' },
      { column_name: 'Points', column_type: 'number' },
    ]);
    await appendRows(g, name, [
      { Name: 'first', Points: 1 },
      { Name: 'last', Points: 2 },
    ]);
  };
  const points = async (table: string) => (await listRows(g, `table_name=${table}&limit=2&convert_keys=true`)).map((r) => [r.Name, r.Points]);

  it('update-table-via-excel-csv: the cells it changes in existing rows stay as they were until the import commits, then change with their events', async () => {
    await keyedTable('Keyed');
    const { answer, go } = await pausedImport('update-table-via-excel-csv', { table_name: 'Keyed', selected_columns: 'Name' }, 2, keyedFile);

    // Two batches in: `first`'s change is kept aside, not in the table, no modify event anywhere.
    expect(await points('Keyed')).toEqual([['first', 1], ['last', 2]]);
    const sql = await g.call('POST', 'sql/', { sql: "SELECT Points FROM Keyed WHERE Name = 'first'", convert_keys: true });
    expect(sql.json().results.map((r: { Points: number }) => r.Points)).toEqual([1]);
    expect(await heldUpdates()).toBe(1);
    expect(await modifyEvents('Keyed', ['first', 'last'])).toEqual([]);

    go();
    const res = await answer;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ success: true });
    expect(await points('Keyed')).toEqual([['first', 10], ['last', 20]]);
    expect(await listRows(g, 'table_name=Keyed&limit=1000&start=1000')).toHaveLength(1000);
    const modified = await modifyEvents('Keyed', ['first', 'last']);
    expect(modified.map((e) => e.row_name)).toEqual(['first', 'last']);
    expect(JSON.parse(modified[0]!.row_data)).toEqual([expect.objectContaining({ column_name: 'Points', old_value: 1, value: 10 })]);
    expect(await heldUpdates()).toBe(0);
    expect(await held()).toBe(0);
    expect(await jobs()).toBe(0);
  }, 90_000);

  it('update-table-via-excel-csv: a row to update deleted before the release fails the import whole (404), nothing changed or left', async () => {
    await keyedTable('Keyed2');
    const tableId = (await g.call('GET', 'metadata/')).json().metadata.tables.find((x: { name: string }) => x.name === 'Keyed2')._id as string;
    const { answer, go } = await pausedImport('update-table-via-excel-csv', { table_name: 'Keyed2', selected_columns: 'Name' }, 3, keyedFile);
    const last = (await listRows(g, 'table_name=Keyed2&convert_keys=true')).find((r) => r.Name === 'last')!;
    expect((await g.call('DELETE', 'rows/', { table_name: 'Keyed2', row_ids: [last._id] })).statusCode).toBe(200);
    go();
    const res = await answer;
    expect(res.statusCode, res.body).toBe(404);
    expect(await points('Keyed2')).toEqual([['first', 1]]);
    expect(await count(tableId)).toBe(1);
    expect(await count('', 'staged')).toBe(0);
    expect(await modifyEvents('Keyed2', ['first'])).toEqual([]);
    expect(await heldUpdates()).toBe(0);
    expect(await held()).toBe(0);
    expect(await jobs()).toBe(0);
  }, 90_000);

  it('a kept cell change a column refuses is a 400 at its batch, and nothing is kept', async () => {
    const row = (await listRows(g, 'table_name=Keyed&limit=1&convert_keys=true'))[0]!;
    const write = t.container.baseData.rows.update(
      { id: g.base.id, uuid: g.base.uuid },
      { user: 'test@auth.local', app: null },
      { table_name: 'Keyed', updates: [{ row_id: row._id, row: { Points: { not: 'a number' } } }] },
      { id: 'a-hold-of-this-test', stage: 'tst' },
    );
    await expect(write).rejects.toMatchObject({ statusCode: 400 });
    expect(await heldUpdates()).toBe(0);
    expect(await points('Keyed')).toEqual([['first', 10], ['last', 20]]);
  });
});
