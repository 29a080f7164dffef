/**
 * INSERT / UPDATE / DELETE through SQL go through the rows module's write path: the same coercion,
 * the same change events (one per row, in the write's transaction), so webhooks fire as for the rows API.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventsAfter, type ChangeEvent } from '../../src/modules/events/index.js';
import { ROW_LIMITS } from '../../src/modules/rows/index.js';
import { SqlService } from '../../src/modules/sql/index.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { apiTokenBaseToken } from './rows.fixtures.js';
import { seedSqlData, sqlGateway, snapshot, type SqlGateway } from './sql-fixture.js';
import { Receiver, createWebhook, drain } from './webhooks-support.js';

describe.each(DIALECTS)('SQL writes (%s)', (dialect) => {
  let t: TestApp;
  let g: SqlGateway;
  let lastEvent = 0;

  /** Events written since the previous call. */
  const newEvents = async (): Promise<ChangeEvent[]> => {
    const events = (await eventsAfter(t.container.db, lastEvent, 100_000)).filter((e) => e.baseId === g.base.id);
    const all = await eventsAfter(t.container.db, lastEvent, 100_000);
    if (all.length > 0) lastEvent = all[all.length - 1]!.id;
    return events;
  };
  const ok = async (sql: string, parameters?: unknown[], token?: string) => {
    const res = await g.sql({ sql, parameters }, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ success: boolean; affected_rows: number; results: unknown[]; metadata: unknown[] }>();
  };
  const refused = async (sql: string, message: string | RegExp) => {
    const before = await snapshot(t, [g.base.id]);
    const res = await g.sql({ sql });
    expect(res.statusCode).toBe(400);
    expect(res.json().success).toBe(false);
    if (typeof message === 'string') expect(res.json().error_message).toBe(message);
    else expect(res.json().error_message).toMatch(message);
    expect(await snapshot(t, [g.base.id])).toEqual(before);
  };
  const rowsByName = async (where: string) =>
    (await g.query(`SELECT * FROM Contacts WHERE ${where}`, { convert_keys: true })).results as Array<Record<string, unknown>>;

  beforeAll(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    g = await sqlGateway(t);
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await seedSqlData(t.container.db, g.base.id);
    await newEvents();
  });

  it('INSERT coerces values per column type like the rows API and writes one insert_row event per row', async () => {
    const res = await ok(
      "INSERT INTO Contacts (Name, Age, City, Tags, Active, Birthday, Duration) VALUES ('Eve', '41', 'Paris', ('red', 'yellow'), 'true', '2000-01-02T10:00:00+02:00', '1:30'), (?, ?, NULL, NULL, false, NULL, NULL)",
      ['Frank', 7],
    );
    expect(res).toMatchObject({ success: true, affected_rows: 2, results: [], metadata: [] });
    const [eve] = await rowsByName("Name = 'Eve'");
    // Birthday is a date-only column: the day written with the offset is kept (never shifted by the conversion).
    expect(eve).toMatchObject({ Name: 'Eve', Age: 41, City: 'Paris', Tags: ['red', 'yellow'], Active: true, Birthday: '2000-01-02T00:00:00+00:00', Duration: 5400, Code: '0007' });
    const [frank] = await rowsByName("Name = 'Frank'");
    expect(frank).toMatchObject({ Name: 'Frank', Age: 7, City: null, Tags: null, Active: false });
    // Unknown options were created, as the rows API does.
    const meta = (await g.query("SELECT City, Tags FROM Contacts WHERE Name = 'Eve'")).metadata;
    expect((meta[0]!.data as { options: Array<{ name: string }> }).options.map((o) => o.name)).toContain('Paris');
    expect((meta[1]!.data as { options: Array<{ name: string }> }).options.map((o) => o.name)).toContain('yellow');

    const events = await newEvents();
    expect(events.map((e) => [e.opType, e.rowName, e.opUser, e.opApp])).toEqual([
      ['insert_row', 'Eve', g.owner.virtualId, null],
      ['insert_row', 'Frank', g.owner.virtualId, null],
    ]);
    expect(events[0]!.rowData).toEqual(expect.arrayContaining([expect.objectContaining({ column_name: 'Age', value: 41, old_value: null })]));
    expect(events[0]!.row).toMatchObject({ _id: eve!._id, '0000': 'Eve', c001: 41 });
  });

  it('writes the same events as the rows API for the same insert, update and delete', async () => {
    const values = { Name: 'Twin', Age: 5, City: 'Berlin', Tags: ['green'], Active: true, Birthday: '2020-02-02', Email: 'twin@example.com' };
    await ok("INSERT INTO Contacts (Name, Age, City, Tags, Active, Birthday, Email) VALUES ('Twin', 5, 'Berlin', ('green'), true, '2020-02-02', 'twin@example.com')");
    const viaApi = await g.call('POST', 'rows/', { table_name: 'Contacts', rows: [values] });
    expect(viaApi.statusCode).toBe(200);
    const inserted = await newEvents();
    expect(inserted).toHaveLength(2);
    const [sqlRow, apiRow] = inserted.map((e) => e.rowId) as [string, string];
    // Equal but for ids and the auto-number each new row draws.
    const comparable = (e: ChangeEvent) => ({
      ...e,
      id: 0,
      rowId: '',
      writeId: null,
      row: e.row ? { ...e.row, _id: '', c013: '' } : null,
      rowData: e.rowData.filter((d) => d.column_key !== 'c013'),
    });
    expect(comparable(inserted[0]!)).toEqual(comparable(inserted[1]!));

    t.clock.advance(60_000);
    await ok("UPDATE Contacts SET Age = 6, Tags = ('blue', 'red'), Active = false, Email = NULL WHERE _id = ?", [sqlRow]);
    const viaApiUpdate = await g.call('PUT', 'rows/', { table_name: 'Contacts', updates: [{ row_id: apiRow, row: { Age: 6, Tags: ['blue', 'red'], Active: false, Email: null } }] });
    expect(viaApiUpdate.statusCode).toBe(200);
    const modified = await newEvents();
    expect(modified.map((e) => e.opType)).toEqual(['modify_row', 'modify_row']);
    expect(comparable(modified[0]!)).toEqual(comparable(modified[1]!));
    expect(modified[0]!.rowData.map((d) => [d.column_name, d.old_value, d.value])).toEqual(
      expect.arrayContaining([
        ['Age', 5, 6],
        ['Active', true, false],
      ]),
    );

    await ok('DELETE FROM Contacts WHERE _id = ?', [sqlRow]);
    expect((await g.call('DELETE', 'rows/', { table_name: 'Contacts', row_ids: [apiRow] })).statusCode).toBe(200);
    const deleted = await newEvents();
    expect(deleted.map((e) => e.opType)).toEqual(['delete_row', 'delete_row']);
    expect(comparable(deleted[0]!)).toEqual(comparable(deleted[1]!));
  });

  it('UPDATE and DELETE act on every matching row and nothing else', async () => {
    const before = (await g.query('SELECT COUNT(*) FROM Contacts')).results[0] as Record<string, number>;
    const res = await ok("UPDATE Contacts SET Notes = 'reviewed' WHERE City = 'Berlin' OR Age IS NULL");
    expect(res.affected_rows).toBe(3);
    const notes = await g.query("SELECT Name FROM Contacts WHERE Notes = 'reviewed' ORDER BY Name", { convert_keys: true });
    expect(notes.results.map((r) => r.Name)).toEqual(['Alice', 'Charlie', 'alice lower']);
    const events = await newEvents();
    expect(events.map((e) => e.opType)).toEqual(['modify_row', 'modify_row', 'modify_row']);
    expect(events.every((e) => e.rowData.length === 1 && e.rowData[0]!.column_name === 'Notes' && e.rowData[0]!.value === 'reviewed')).toBe(true);

    const none = await ok("UPDATE Contacts SET Notes = 'x' WHERE Name = 'nobody'");
    expect(none.affected_rows).toBe(0);
    const unchanged = await ok("UPDATE Contacts SET Notes = 'reviewed' WHERE Name = 'Alice'");
    expect(unchanged.affected_rows).toBe(1);
    expect(await newEvents()).toEqual([]); // nothing changed, so no event (as the rows API)

    const removed = await ok("DELETE FROM Contacts WHERE Notes = 'reviewed' AND Name != 'Alice'");
    expect(removed.affected_rows).toBe(2);
    expect((await newEvents()).map((e) => [e.opType, e.rowName])).toEqual([
      ['delete_row', 'Charlie'],
      ['delete_row', 'alice lower'],
    ]);
    const after = (await g.query('SELECT COUNT(*) FROM Contacts')).results[0] as Record<string, number>;
    expect(after['COUNT(*)']).toBe(before['COUNT(*)']! - 2);
    expect(await rowsByName("Name = 'Alice'")).toHaveLength(1);
  });

  it('writes as the API-Token app when the Base-Token came from one', async () => {
    const appToken = await apiTokenBaseToken(g, 'sql-robot');
    await ok("INSERT INTO Contacts (Name) VALUES ('Robot')", undefined, appToken);
    const [event] = await newEvents();
    expect(event).toMatchObject({ opType: 'insert_row', opUser: 'sql-robot', opApp: 'sql-robot' });
    const [robot] = await rowsByName("Name = 'Robot'");
    expect(robot).toMatchObject({ _creator: 'sql-robot', Author: 'sql-robot' });
  });

  it('refuses bad values, read-only columns and malformed statements, changing nothing', async () => {
    await refused("INSERT INTO Contacts (Age) VALUES ('abc')", /value of column Age \(number\) is invalid/);
    await refused("UPDATE Contacts SET Birthday = 'not a date'", /value of column Birthday \(date\) is invalid/);
    await refused("INSERT INTO Contacts (Name, Age) VALUES ('x', 1), ('y', 'nope')", /Row 2: value of column Age/);
    await refused("INSERT INTO Contacts (Files) VALUES ('x')", "Column 'Files' (file) cannot be written with SQL.");
    await refused("UPDATE Contacts SET Created = '2020-01-01'", "Column 'Created' (ctime) cannot be written with SQL.");
    await refused("UPDATE Contacts SET _ctime = '2020-01-01'", '_ctime is maintained by the server and cannot be written.');
    await refused("INSERT INTO Contacts (Nope) VALUES ('x')", "Column 'Nope' not found in table 'Contacts'.");
    await refused("INSERT INTO Contacts (Name, Age) VALUES ('x')", "SQL syntax error: column count doesn't match value count at row 1.");
    await refused("INSERT INTO Contacts VALUES ('x')", 'INSERT needs a column list: INSERT INTO table (col1, col2) VALUES (…).');
    await refused("INSERT INTO Contacts (Name, Name) VALUES ('x', 'y')", 'A column is listed twice in INSERT.');
    await refused("UPDATE Contacts SET Name = 'a', Name = 'b'", "Column 'Name' is set twice.");
    await refused('UPDATE Contacts SET Age = Age + 1', "Values for column 'Age' must be constants or ? parameters (no expressions or functions).");
    await refused("UPDATE Contacts SET Name = 'x' ORDER BY Age LIMIT 1", 'ORDER BY is not supported in UPDATE.');
    await refused('DELETE FROM Contacts LIMIT 1', 'LIMIT is not supported in DELETE.');
    await refused("UPDATE Nope SET Name = 'x'", "Table 'Nope' not found.");
  });

  it('delivers webhooks for SQL writes exactly as for rows API writes', async () => {
    const receiver = await new Receiver().start();
    try {
      await t.container.dispatcher.runOnce(); // earlier tests' events go out before the webhook exists
      await createWebhook(t, g.owner, g.base, { url: receiver.url() });
      await ok("UPDATE Contacts SET Rating = 1 WHERE Name IN ('Alice', 'Bob')");
      await t.container.dispatcher.runOnce();
      await drain(t);
      const bodies = receiver.bodies();
      expect(bodies.map((b) => [b.event, b.data.op_type, b.data.row_name])).toEqual([
        ['update', 'modify_row', 'Alice'],
        ['update', 'modify_row', 'Bob'],
      ]);
      expect(bodies[0]!.data).toMatchObject({ dtable_uuid: g.base.uuid, table_name: 'Contacts', op_user: g.owner.virtualId });
      expect(bodies[1]!.data.row_data).toEqual([expect.objectContaining({ column_name: 'Rating', old_value: 2, value: 1 })]);
    } finally {
      await receiver.close();
    }
  });

  it('has no row limit: a statement larger than one rows-API call is handed over in chunks', async () => {
    const n = ROW_LIMITS.append + 200;
    const values = Array.from({ length: n }, (_, i) => `('bulk ${i}', ${i})`).join(', ');
    expect((await ok(`INSERT INTO \`Other Table\` (Title) VALUES ${values.replace(/, \d+\)/g, ')')}`)).affected_rows).toBe(n);
    const updated = await ok("UPDATE `Other Table` SET Title = 'bulk' WHERE Title LIKE 'bulk %'");
    expect(updated.affected_rows).toBe(n);
    expect((await g.query("SELECT COUNT(*) FROM `Other Table` WHERE Title = 'bulk'")).results).toEqual([{ 'COUNT(*)': n }]);
    const removed = await ok("DELETE FROM `Other Table` WHERE Title = 'bulk'");
    expect(removed.affected_rows).toBe(n);
    const events = await newEvents();
    expect(events.filter((e) => e.opType === 'insert_row')).toHaveLength(n);
    expect(events.filter((e) => e.opType === 'modify_row')).toHaveLength(n);
    expect(events.filter((e) => e.opType === 'delete_row')).toHaveLength(n);
  });

  it('writes a statement larger than one rows-API call whole or not at all', async () => {
    await newEvents();
    const n = ROW_LIMITS.append + 5;
    // Every value is fine but the last, which lands in the second part handed to the rows module.
    const values = Array.from({ length: n }, (_, i) => (i === n - 1 ? "('x', 'not a number')" : `('atomic ${i}', ${i})`)).join(', ');
    await refused(`INSERT INTO Contacts (Name, Age) VALUES ${values}`, /Age/);
    expect(await newEvents()).toEqual([]);
  });

  it('splits writes at the given per-call limits', async () => {
    const calls: Array<[string, number]> = [];
    const rows = t.container.baseData.rows;
    const service = new SqlService({
      db: t.container.db,
      dialect,
      limits: { append: 2, update: 2, delete: 3 },
      writer: {
        writeMany: (base, actor, work) =>
          rows.writeMany(base, actor, (scope) =>
            work({
              trx: scope.trx,
              append: (body) => (calls.push(['append', (body.rows as unknown[]).length]), scope.append(body)),
              update: (body) => (calls.push(['update', (body.updates as unknown[]).length]), scope.update(body)),
              remove: (body) => (calls.push(['remove', (body.row_ids as unknown[]).length]), scope.remove(body)),
            }),
          ),
      },
    });
    const caller = { base: { id: g.base.id, uuid: g.base.uuid }, permission: 'rw', actor: { user: g.owner.virtualId, app: null } };
    await service.execute(caller, { sql: "INSERT INTO `Other Table` (Title) VALUES ('c1'), ('c2'), ('c3'), ('c4'), ('c5')" });
    await service.execute(caller, { sql: "UPDATE `Other Table` SET Title = 'chunked' WHERE Title LIKE 'c_'" });
    const deleted = await service.execute(caller, { sql: "DELETE FROM `Other Table` WHERE Title = 'chunked'" });
    expect(deleted.affected_rows).toBe(5);
    expect(calls).toEqual([
      ['append', 2], ['append', 2], ['append', 1],
      ['update', 2], ['update', 2], ['update', 1],
      ['remove', 3], ['remove', 2],
    ]);
    await expect(service.execute({ ...caller, permission: 'r' }, { sql: 'DELETE FROM Contacts' })).rejects.toMatchObject({ statusCode: 403 });
  });
});
