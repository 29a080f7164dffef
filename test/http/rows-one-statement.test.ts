import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeEvent } from '../../src/modules/events/index.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { appendRows, gateway, refuseEventsNamed, storedRowCount, type Gateway } from './rows.fixtures.js';

/**
 * Appends on PostgreSQL go to the database as one statement when they can (BaseWriter.oneStatement):
 * the same rows, events, log entries and revision as the transaction, all or nothing, and a stale
 * metadata version or a work that needs the database redone in the transaction. On SQLite every write
 * is a transaction; the same behaviour is checked there.
 */
describe.each(DIALECTS)('one-statement appends (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const handed: ChangeEvent[] = [];
  const stats = () => ({ ...t.container.baseData.writer.oneStatementStats });
  const revision = async () =>
    Number((await t.container.db.selectFrom('base_metadata').select('revision').where('base_id', '=', g.base.id).executeTakeFirstOrThrow()).revision);
  const count = async (table: 'operation_log' | 'base_rows' | 'events') =>
    Number((await t.container.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('base_id', '=', g.base.id).executeTakeFirstOrThrow()).n);

  beforeAll(async () => {
    t = await createTestApp(dialect);
    t.container.dispatcher.register({ name: 'one-statement-recorder', handle: async (_trx, events) => void handed.push(...events) });
    g = await gateway(t);
    await appendRows(g, 'Table1', [{ Name: 'first' }]); // the writer has read the base's metadata now
  });
  afterAll(() => t.close());

  it('writes the row, its event, its log entry and the next revision, in one statement on PostgreSQL', async () => {
    const before = { stats: stats(), revision: await revision(), rows: await count('base_rows'), events: await count('events'), log: await count('operation_log') };
    const [id] = await appendRows(g, 'Table1', [{ Name: 'one' }]);
    expect(stats().written - before.stats.written).toBe(dialect === 'postgres' ? 1 : 0);
    expect(await revision()).toBe(before.revision + 1);
    expect(await count('base_rows')).toBe(before.rows + 1);
    expect(await count('events')).toBe(before.events + 1);
    expect(await count('operation_log')).toBe(before.log + 1);
    const res = await g.call('GET', `rows/${id}/?table_name=Table1&convert_keys=true`);
    expect(res.json().Name).toBe('one');
    const history = await g.call('GET', `activities/?row_id=${id}`);
    expect(history.statusCode, history.body).toBe(200);
    expect(history.body).toContain('one');
    await t.container.dispatcher.runOnce();
    const event = handed.find((e) => e.rowId === id)!;
    expect(event.opType).toBe('insert_row');
    expect(event.rowData.find((c) => c.column_key === '0000')?.value).toBe('one');
  });

  it('redoes an append in the transaction when the metadata moved since it was read (another instance), writing it once', async () => {
    // Another instance renamed a column: the version this process knows is stale.
    const meta = await t.container.db.selectFrom('base_metadata').select(['version', 'data']).where('base_id', '=', g.base.id).executeTakeFirstOrThrow();
    const data = JSON.parse(meta.data) as { tables: Array<{ columns: Array<{ key: string; name: string }> }> };
    data.tables[0]!.columns[0]!.name = 'Title';
    await t.container.db.updateTable('base_metadata').set({ version: Number(meta.version) + 1, data: JSON.stringify(data) }).where('base_id', '=', g.base.id).execute();
    const before = { stats: stats(), rows: await count('base_rows'), events: await count('events') };
    const res = await g.call('POST', 'rows/', { table_name: 'Table1', rows: [{ Title: 'renamed' }] });
    expect(res.statusCode, res.body).toBe(200);
    expect(stats().redone - before.stats.redone).toBe(dialect === 'postgres' ? 1 : 0);
    expect(await count('base_rows')).toBe(before.rows + 1);
    expect(await count('events')).toBe(before.events + 1);
    const stored = await t.container.db.selectFrom('base_rows').select('data').where('row_id', '=', res.json().row_ids[0]._id).executeTakeFirstOrThrow();
    expect(JSON.stringify(stored.data)).toContain('renamed');
    // The next append works on the version the redo read: one statement again.
    const next = stats();
    await appendRows(g, 'Table1', [{ Title: 'again' }]);
    expect(stats().written - next.written).toBe(dialect === 'postgres' ? 1 : 0);
  });

  it('redoes in the transaction an append whose work changes the metadata (an auto-number counter)', async () => {
    const added = await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'No', column_type: 'auto-number', column_data: { digits: 4 } });
    expect(added.statusCode, added.body).toBe(200);
    const key = added.json().key as string;
    await appendRows(g, 'Table1', [{ Title: 'warm' }]);
    const before = stats();
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => g.call('POST', 'rows/', { table_name: 'Table1', rows: [{ Title: `n${i}` }] })));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    expect(stats().written).toBe(before.written);
    const numbers = (await t.container.db.selectFrom('base_rows').select('data').where('base_id', '=', g.base.id).execute())
      .map((r) => (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as Record<string, unknown>)
      .filter((d) => String(d['0000']).startsWith('n'))
      .map((d) => d[key]);
    expect(numbers.every((n) => n !== undefined)).toBe(true);
    expect(new Set(numbers).size).toBe(6);
    // Back to a table without counters for the tests below.
    await g.call('DELETE', 'columns/', { table_name: 'Table1', column: 'No' });
  });

  it('leaves nothing when a part of the statement fails: no row, no event, no log entry, no revision', async () => {
    const allowEvents = await refuseEventsNamed(t.container.db, dialect);
    await appendRows(g, 'Table1', [{ Title: 'warm' }]);
    const before = { stats: stats(), revision: await revision(), rows: await count('base_rows'), events: await count('events'), log: await count('operation_log') };
    await expect(t.container.baseData.rows.append(g.base, { user: 'u@auth.local', app: null }, { table_name: 'Table1', rows: [{ Title: 'refused' }] })).rejects.toThrow(/refused by the test/);
    expect(stats().written).toBe(before.stats.written);
    expect(await revision()).toBe(before.revision);
    expect(await count('base_rows')).toBe(before.rows);
    expect(await count('events')).toBe(before.events);
    expect(await count('operation_log')).toBe(before.log);
    await allowEvents();
  });

  it('concurrent appends and updates of one base: nothing lost, each row’s events in the order its writes took effect, ids in commit order', async () => {
    const [target] = await appendRows(g, 'Table1', [{ Title: 'v0' }]);
    await t.container.dispatcher.runOnce();
    handed.length = 0;
    const calls = Array.from({ length: 30 }, (_, i) =>
      i % 3 === 0
        ? g.call('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: target, row: { Title: `v${i / 3 + 1}` } }] })
        : g.call('POST', 'rows/', { table_name: 'Table1', rows: [{ Title: `c${i}` }] }),
    );
    for (const r of await Promise.all(calls)) expect(r.statusCode, r.body).toBe(200);
    await t.container.dispatcher.runOnce();
    const appended = handed.filter((e) => e.opType === 'insert_row' && String(e.rowName).startsWith('c'));
    expect(appended).toHaveLength(20);
    const ids = handed.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Each update of the target saw the value the one before it left: the old values chain.
    const modifies = handed.filter((e) => e.rowId === target && e.opType === 'modify_row');
    expect(modifies).toHaveLength(10);
    for (let i = 1; i < modifies.length; i++) expect(modifies[i]!.rowData[0]!.old_value).toBe(modifies[i - 1]!.rowData[0]!.value);
    expect(modifies[0]!.rowData[0]!.old_value).toBe('v0');
    const res = await g.call('GET', `rows/${target}/?table_name=Table1&convert_keys=true`);
    expect(res.json().Title).toBe(modifies.at(-1)!.rowData[0]!.value);
    const inserts = await t.container.db.selectFrom('events').select('id').where('base_id', '=', g.base.id).where('op_type', '=', 'insert_row').execute();
    expect(await storedRowCount(g)).toBe(inserts.length);
  });
});
