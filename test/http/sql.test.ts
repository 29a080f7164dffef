import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { apiTokenBaseToken, readOnlyToken } from './rows.fixtures.js';
import { CITY_OPTIONS, CONTACT_COLUMNS, sqlGateway, snapshot, type SqlGateway } from './sql-fixture.js';

describe.each(DIALECTS)('POST …/sql/ (%s)', (dialect) => {
  let t: TestApp;
  let g: SqlGateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await sqlGateway(t);
  });
  afterAll(() => t.close());

  describe('response shape', () => {
    it('answers with and without the trailing slash, keyed by column key by default', async () => {
      for (const suffix of ['sql', 'sql/']) {
        const res = await g.sql({ sql: "SELECT Name, Age FROM Contacts WHERE Name = 'Alice'" }, undefined, suffix);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({
          success: true,
          error_message: '',
          is_join_stmt: false,
          metadata: [
            expect.objectContaining({ key: '0000', name: 'Name', type: 'text', data: null }),
            expect.objectContaining({ key: 'c001', name: 'Age', type: 'number' }),
          ],
          results: [{ _id: 'row-alice-000000000001', '0000': 'Alice', c001: 30 }],
        });
      }
    });

    it('keys results by column name with convert_keys, and shows select options by name then', async () => {
      const byName = await g.query("SELECT Name, City, Tags FROM Contacts WHERE Name = 'Alice'", { convert_keys: true });
      expect(byName.results).toEqual([{ _id: 'row-alice-000000000001', Name: 'Alice', City: 'Berlin', Tags: ['red', 'green'] }]);
      const byKey = await g.query("SELECT Name, City, Tags FROM Contacts WHERE Name = 'Alice'");
      // Raw (key) results carry option ids, which the official clients map back through `metadata`.
      expect(byKey.results).toEqual([{ _id: 'row-alice-000000000001', '0000': 'Alice', c002: '222222', c003: ['444444', '555555'] }]);
      expect(byKey.metadata[1]).toMatchObject({ key: 'c002', data: { options: CITY_OPTIONS } });
    });

    it('SELECT * returns every column (null when empty), the row fields and the table metadata', async () => {
      const { results, metadata } = await g.query("SELECT * FROM Contacts WHERE Name = 'Diana'", { convert_keys: true });
      expect(metadata.map((m) => m.key)).toEqual(CONTACT_COLUMNS.map((c) => c.key));
      expect(results).toHaveLength(1);
      const row = results[0]!;
      expect(Object.keys(row).sort()).toEqual(
        ['_id', '_ctime', '_mtime', '_creator', '_last_modifier', '_archived', '_locked', '_locked_by', ...CONTACT_COLUMNS.map((c) => c.name)].sort(),
      );
      expect(row).toMatchObject({
        _id: 'row-diana-000000000004',
        _ctime: '2026-01-05T10:03:00.000+00:00',
        _mtime: '2026-01-05T10:03:01.000+00:00',
        _archived: false,
        Name: 'Diana',
        Birthday: null,
        Tags: null,
        Active: true,
        Duration: 0,
        Rating: 0,
        Created: '2026-01-05T10:03:00.000+00:00',
        Author: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb@auth.local',
      });
    });

    it('keys aggregates by the text they were written as, or by their alias', async () => {
      const { results, metadata } = await g.query('SELECT COUNT(*), count(Age) AS counted, SUM(Age), AVG( Age ), MIN(Age), MAX(Age) FROM Contacts');
      expect(results).toEqual([{ 'COUNT(*)': 6, counted: 5, 'SUM(Age)': 115.5, 'AVG( Age )': 23.1, 'MIN(Age)': -2.5, 'MAX(Age)': 35 }]);
      expect(metadata[0]).toEqual({ key: 'COUNT(*)', name: 'COUNT(*)', type: 'number', data: null });
      expect(metadata[1]).toEqual({ key: 'counted', name: 'counted', type: 'number', data: null });
    });

    it('answers dates as RFC 3339 in UTC, the way the original does', async () => {
      const { results } = await g.query("SELECT Birthday, Meeting, _ctime FROM Contacts WHERE Name = 'Alice'", { convert_keys: true });
      expect(results[0]).toEqual({
        _id: 'row-alice-000000000001',
        Birthday: '1994-03-01T00:00:00+00:00',
        Meeting: '2026-01-10T09:30:00+00:00',
        _ctime: '2026-01-05T10:00:00.000+00:00',
      });
    });

    it('finds tables by id and columns by key as well as by name', async () => {
      const { results } = await g.query("SELECT `0000`, c001 FROM `0000` WHERE c001 = 25");
      expect(results).toEqual([{ _id: 'row-bob-00000000000002', '0000': 'Bob', c001: 25 }]);
    });
  });

  describe('parameters', () => {
    it('binds ? placeholders in order: strings, numbers, booleans and null', async () => {
      const { results } = await g.query('SELECT Name FROM Contacts WHERE City = ? AND Age > ? AND Active = ? LIMIT ?', {
        parameters: ['Berlin', 29, true, 5],
        convert_keys: true,
      });
      expect(results).toEqual([{ _id: 'row-alice-000000000001', Name: 'Alice' }]);
      const none = await g.query('SELECT Name FROM Contacts WHERE Name = ?', { parameters: [null] });
      expect(none.results).toEqual([]);
    });

    it('treats a parameter as a value, never as SQL', async () => {
      const { results } = await g.query('SELECT Name FROM Contacts WHERE Name = ?', { parameters: ["x' OR '1'='1"] });
      expect(results).toEqual([]);
      const quote = await g.query('SELECT `Full Name` FROM Contacts WHERE `Full Name` = ?', { parameters: ["O'Brien"], convert_keys: true });
      expect(quote.results).toEqual([{ _id: 'row-charlie-0000000003', 'Full Name': "O'Brien" }]);
    });

    it('refuses a count mismatch and non-scalar parameters with 400', async () => {
      const cases: Array<[unknown, string]> = [
        [[], 'The statement has 1 placeholder(s) but 0 parameter(s) were given.'],
        [['a', 'b'], 'The statement has 1 placeholder(s) but 2 parameter(s) were given.'],
        [[{ a: 1 }], 'Parameter 1 must be a string, a number, a boolean or null.'],
        [[['a']], 'Parameter 1 must be a string, a number, a boolean or null.'],
        ['Alice', 'parameters must be an array.'],
      ];
      for (const [parameters, message] of cases) {
        const res = await g.sql({ sql: 'SELECT Name FROM Contacts WHERE Name = ?', parameters });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ success: false, error_message: message });
      }
    });
  });

  describe('limits', () => {
    it('honours LIMIT n, LIMIT n OFFSET m and LIMIT m, n', async () => {
      const names = async (text: string) => (await g.query(text, { convert_keys: true })).results.map((r) => r.Name);
      // NULL sorts first ascending (and last descending) on both engines.
      expect(await names('SELECT Name FROM Contacts ORDER BY Age LIMIT 2')).toEqual(['alice lower', null]);
      expect(await names('SELECT Name FROM Contacts ORDER BY Age DESC LIMIT 2')).toEqual(['Charlie', 'Alice']);
      expect(await names('SELECT Name FROM Contacts WHERE Age IS NOT NULL ORDER BY Age LIMIT 2')).toEqual([null, 'Bob']);
      expect(await names('SELECT Name FROM Contacts WHERE Age IS NOT NULL ORDER BY Age LIMIT 2 OFFSET 1')).toEqual(['Bob', 'Diana']);
      expect(await names('SELECT Name FROM Contacts WHERE Age IS NOT NULL ORDER BY Age LIMIT 1, 2')).toEqual(['Bob', 'Diana']);
      expect(await names('SELECT Name FROM Contacts LIMIT 0')).toEqual([]);
    });
  });

  describe('errors', () => {
    const refused = async (body: unknown, message: string | RegExp) => {
      const res = await g.sql(body);
      expect(res.statusCode).toBe(400);
      const json = res.json();
      expect(json.success).toBe(false);
      if (typeof message === 'string') expect(json.error_message).toBe(message);
      else expect(json.error_message).toMatch(message);
    };

    it('names an unknown table or column', async () => {
      await refused({ sql: 'SELECT * FROM nonexistent_table' }, "Table 'nonexistent_table' not found.");
      await refused({ sql: 'SELECT Nope FROM Contacts' }, "Column 'Nope' not found in table 'Contacts'.");
      await refused({ sql: 'SELECT Name FROM Contacts WHERE Nope = 1' }, "Column 'Nope' not found in table 'Contacts'.");
      await refused({ sql: 'SELECT Name FROM Contacts ORDER BY Nope' }, "Column 'Nope' not found in table 'Contacts'.");
    });

    it('reports syntax errors with their position', async () => {
      await refused({ sql: 'SELEC * FORM test' }, 'SQL syntax error at line 1, column 7 near "* FORM test".');
      await refused({ sql: 'SELECT Name FROM' }, /^SQL syntax error at line 1, column 17/);
    });

    it('reports type errors', async () => {
      await refused({ sql: "SELECT Name FROM Contacts WHERE Age = 'abc'" }, "Comparison with Age expects a number, got 'abc'.");
      await refused({ sql: "SELECT Name FROM Contacts WHERE Birthday > 'soon'" }, /^Comparison with Birthday expects a date/);
      await refused({ sql: "SELECT Name FROM Contacts WHERE Age LIKE '3%'" }, 'LIKE only supports text; Age is number.');
      await refused({ sql: 'SELECT SUM(Name) FROM Contacts' }, 'SUM needs a number column; Name is text.');
      await refused({ sql: 'SELECT Name FROM Contacts WHERE Name = Age' }, 'Cannot compare Name (string) with Age (number).');
      await refused({ sql: "SELECT Name FROM Contacts WHERE Files = 'x'" }, 'Files cannot be used in WHERE.');
      await refused({ sql: 'SELECT Name FROM Contacts WHERE Name IS TRUE' }, 'IS TRUE / IS FALSE need a checkbox column; Name is string.');
    });

    it('refuses statements and clauses outside the dialect', async () => {
      await refused({ sql: 'DROP TABLE Contacts' }, 'Only SELECT, INSERT, UPDATE and DELETE statements are supported.');
      await refused({ sql: 'SELECT Name, COUNT(*) FROM Contacts' }, 'Name must appear in GROUP BY or be used in an aggregate.');
      await refused({ sql: 'SELECT City FROM Contacts GROUP BY City ORDER BY Name' }, 'Name must appear in GROUP BY or be used in an aggregate.');
      await refused({ sql: 'SELECT NOSUCHFN(Name) FROM Contacts' }, 'Function NOSUCHFN is not supported.');
      await refused({ sql: 'SELECT Name FROM Contacts WHERE COUNT(*) > 1' }, 'Aggregate COUNT is not allowed in WHERE.');
      await refused({ sql: 'SELECT Name FROM Contacts, `Other Table`' }, 'A join needs its conditions in WHERE (T1.a = T2.b).');
      await refused({ sql: 'SELECT * FROM Contacts LIMIT -1' }, 'LIMIT must be a whole number of 0 or more, got -1.');
    });

    it('answers a body that is not JSON with 400', async () => {
      const res = await t.request({
        method: 'POST',
        url: `/api-gateway/api/v2/dtables/${g.base.uuid}/sql/`,
        token: g.token,
        headers: { 'content-type': 'application/json' },
        payload: '{"sql": "SELECT',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error_msg: 'Request body is not valid JSON.' });
    });

    it('requires sql as a string', async () => {
      await refused({}, 'sql is required and must be a string.');
      await refused({ sql: 42 }, 'sql is required and must be a string.');
      await refused({ sql: '   ' }, 'sql is empty.');
    });
  });

  describe('link columns', () => {
    it('answers link cells as {row_id, display_value} lists and refuses them in WHERE', async () => {
      const own = await sqlGateway(t);
      const column = await own.call('POST', 'columns/', { table_name: 'Contacts', column_name: 'Friends', column_type: 'link', column_data: { other_table: 'Other Table' } });
      expect(column.statusCode, column.body).toBe(200);
      const linkId = column.json<{ data: { link_id: string } }>().data.link_id;
      const linked = await own.call('POST', 'links/', {
        link_id: linkId,
        table_name: 'Contacts',
        other_table_name: 'Other Table',
        other_rows_ids_map: { 'row-alice-000000000001': ['row-other-000000000001'] },
      });
      expect(linked.statusCode, linked.body).toBe(200);
      const { results, metadata } = await own.query("SELECT Name, Friends FROM Contacts WHERE Name IN ('Alice', 'Bob')", { convert_keys: true });
      expect(results).toEqual([
        { _id: 'row-alice-000000000001', Name: 'Alice', Friends: [{ row_id: 'row-other-000000000001', display_value: 'Other' }] },
        { _id: 'row-bob-00000000000002', Name: 'Bob', Friends: [] },
      ]);
      expect(metadata[1]).toMatchObject({ name: 'Friends', type: 'link', data: expect.objectContaining({ link_id: linkId }) });
      const star = await own.query("SELECT * FROM Contacts WHERE Name = 'Alice'", { convert_keys: true });
      expect(star.results[0]!.Friends).toEqual([{ row_id: 'row-other-000000000001', display_value: 'Other' }]);
      const where = await own.sql({ sql: "SELECT Name FROM Contacts WHERE Friends = 'Other'" });
      expect(where.statusCode).toBe(400);
      expect(where.json()).toEqual({ success: false, error_message: 'Friends cannot be used in WHERE.' });
    });
  });

  describe('access', () => {
    it('refuses a missing token, a token of another base and an invalid one with 403', async () => {
      const url = `/api-gateway/api/v2/dtables/${g.base.uuid}/sql/`;
      const none = await t.request({ method: 'POST', url, payload: { sql: 'SELECT * FROM Contacts' } });
      expect(none.statusCode).toBe(403);
      const other = await t.request({ method: 'POST', url: `/api-gateway/api/v2/dtables/${g.secret.uuid}/sql/`, token: g.token, payload: { sql: 'SELECT * FROM Contacts' } });
      expect(other.statusCode).toBe(403);
      expect(other.body).not.toContain('Secret');
      const bad = await t.request({ method: 'POST', url, token: 'not-a-jwt', payload: { sql: 'SELECT * FROM Contacts' } });
      expect(bad.statusCode).toBe(403);
    });

    it('lets a read-only token SELECT but refuses its writes with 403, changing nothing', async () => {
      const reader = await readOnlyToken(g);
      const read = await g.sql({ sql: 'SELECT COUNT(*) FROM Contacts' }, reader);
      expect(read.statusCode).toBe(200);
      expect(read.json().results).toEqual([{ 'COUNT(*)': 6 }]);
      const before = await snapshot(t, [g.base.id]);
      for (const sql of ["UPDATE Contacts SET Name = 'x'", 'DELETE FROM Contacts', "INSERT INTO Contacts (Name) VALUES ('x')"]) {
        const res = await g.sql({ sql }, reader);
        expect(res.statusCode).toBe(403);
        expect(res.json()).toEqual({ error_msg: "You don't have permission to perform this operation on this base." });
      }
      const readOnlyApp = await apiTokenBaseToken(g, 'read-only sql app', 'r');
      expect((await g.sql({ sql: 'DELETE FROM Contacts' }, readOnlyApp)).statusCode).toBe(403);
      expect(await snapshot(t, [g.base.id])).toEqual(before);
    });
  });
});
