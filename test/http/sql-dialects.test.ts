/**
 * The same statements over the same stored rows must give the same answer on SQLite and PostgreSQL:
 * every case below runs on each dialect against one expected result (NULLs, every column type,
 * aggregates, ordering, limits). Results use `convert_keys: true`; `_id` is left out of plain rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { sqlGateway, USERS, type SqlGateway } from './sql-fixture.js';

interface Case {
  sql: string;
  parameters?: unknown[];
  /** Expected results; for plain SELECTs a list of names is shorthand for `[{Name: …}, …]`. */
  expect: Array<Record<string, unknown>> | Array<string | null>;
  convertKeys?: boolean;
}

const { ALICE, BOB } = USERS;

const CASES: Record<string, Case[]> = {
  'NULL handling': [
    { sql: 'SELECT Name, Age FROM Contacts ORDER BY Age', expect: [{ Name: 'alice lower', Age: null }, { Name: null, Age: -2.5 }, { Name: 'Bob', Age: 25 }, { Name: 'Diana', Age: 28 }, { Name: 'Alice', Age: 30 }, { Name: 'Charlie', Age: 35 }] },
    { sql: 'SELECT Name FROM Contacts ORDER BY Age DESC', expect: ['Charlie', 'Alice', 'Diana', 'Bob', null, 'alice lower'] },
    { sql: 'SELECT Name FROM Contacts WHERE Name IS NULL', expect: [null] },
    { sql: 'SELECT Name FROM Contacts WHERE Age != 30', expect: ['Bob', 'Charlie', 'Diana', 'alice lower', null] },
    { sql: 'SELECT Name FROM Contacts WHERE Age <> 30 AND Age < 30', expect: ['Bob', 'Diana', null] },
    { sql: 'SELECT Name FROM Contacts WHERE NOT (Age > 26)', expect: ['Bob', 'alice lower', null] },
    { sql: 'SELECT Name FROM Contacts WHERE Age NOT BETWEEN 25 AND 30', expect: ['Charlie', 'alice lower', null] },
    { sql: "SELECT Name FROM Contacts WHERE Name NOT IN ('Alice', 'Bob')", expect: ['Charlie', 'Diana', 'alice lower', null] },
    { sql: 'SELECT Name FROM Contacts WHERE Name = ?', parameters: [null], expect: [] },
    { sql: 'SELECT Name FROM Contacts WHERE Site IS NOT NULL', expect: ['Alice'] },
  ],
  'comparison operators': [
    { sql: 'SELECT Name FROM Contacts WHERE Age BETWEEN 25 AND 30', expect: ['Alice', 'Bob', 'Diana'] },
    { sql: "SELECT Name FROM Contacts WHERE Name IN ('Alice', 'Bob', 'Zed')", expect: ['Alice', 'Bob'] },
    { sql: 'SELECT Name FROM Contacts WHERE Age >= 28 AND Age <= 30', expect: ['Alice', 'Diana'] },
    { sql: "SELECT Name FROM Contacts WHERE (Age > 26 AND City = 'Berlin') OR Name = 'Bob'", expect: ['Alice', 'Bob', 'Charlie'] },
    { sql: 'SELECT Name FROM Contacts WHERE Age > ? AND Age < ?', parameters: ['26', 31], expect: ['Alice', 'Diana'] },
    { sql: 'SELECT Name FROM Contacts WHERE 1 = 1 AND Age = 25', expect: ['Bob'] },
  ],
  'LIKE (case-sensitive, % _ and escapes)': [
    { sql: "SELECT Name FROM Contacts WHERE Name LIKE 'A%'", expect: ['Alice'] },
    { sql: "SELECT Name FROM Contacts WHERE Name LIKE 'a%'", expect: ['alice lower'] },
    { sql: "SELECT Name FROM Contacts WHERE Name LIKE '_ob'", expect: ['Bob'] },
    { sql: "SELECT Name FROM Contacts WHERE Name NOT LIKE '%e%'", expect: ['Bob', 'Diana', null] },
    { sql: "SELECT Name FROM Contacts WHERE Notes LIKE '100\\% sure\\_%'", expect: ['Diana'] },
    { sql: "SELECT Name FROM Contacts WHERE Notes LIKE '100_ sure%'", expect: ['Diana'] },
    { sql: "SELECT Name FROM Contacts WHERE Notes LIKE 'Line 1%'", expect: ['Alice'] },
    { sql: "SELECT Name FROM Contacts WHERE Email LIKE '%@example.com'", expect: ['Alice', 'Bob'] },
    { sql: 'SELECT Name FROM Contacts WHERE Name LIKE ?', parameters: ['[A]%'], expect: [] },
  ],
  'column types': [
    { sql: "SELECT `Full Name`, Größe FROM Contacts WHERE `Full Name` = 'O''Brien'", expect: [{ 'Full Name': "O'Brien", Größe: null }] },
    { sql: 'SELECT Name FROM Contacts WHERE Größe = 1.68', expect: ['Alice', 'Diana'] },
    { sql: 'SELECT Name FROM Contacts WHERE Active', expect: ['Alice', 'Diana'] },
    { sql: 'SELECT Name FROM Contacts WHERE Active = false', expect: ['Bob', 'Charlie', 'alice lower', null] },
    { sql: 'SELECT Name FROM Contacts WHERE Active IS NOT TRUE', expect: ['Bob', 'Charlie', 'alice lower', null] },
    { sql: "SELECT Name FROM Contacts WHERE City = 'Berlin'", expect: ['Alice', 'Charlie'] },
    { sql: "SELECT Name, City FROM Contacts WHERE City IN ('Hamburg', 'Munich')", expect: [{ Name: 'Bob', City: 'Munich' }, { Name: 'Diana', City: 'Hamburg' }, { Name: null, City: 'Munich' }] },
    { sql: "SELECT Name, Tags FROM Contacts WHERE Tags = 'red'", expect: [{ Name: 'Alice', Tags: ['red', 'green'] }] },
    { sql: "SELECT Name FROM Contacts WHERE Tags IN ('green')", expect: ['Alice', 'Charlie'] },
    { sql: 'SELECT Name FROM Contacts WHERE Tags IS NULL', expect: ['Diana', 'alice lower', null] },
    { sql: 'SELECT Name FROM Contacts WHERE People = ?', parameters: [BOB], expect: ['Bob'] },
    { sql: 'SELECT Name, People FROM Contacts WHERE People IN (?)', parameters: [ALICE], expect: [{ Name: 'Alice', People: [ALICE] }, { Name: 'Bob', People: [BOB, ALICE] }] },
    { sql: "SELECT Name, Birthday FROM Contacts WHERE Birthday < '1995-01-01'", expect: [{ Name: 'Alice', Birthday: '1994-03-01T00:00:00+00:00' }, { Name: 'Charlie', Birthday: '1989-07-14T00:00:00+00:00' }] },
    { sql: "SELECT Name FROM Contacts WHERE Birthday = '1994-03-01T00:00:00Z'", expect: ['Alice'] },
    { sql: "SELECT Name FROM Contacts WHERE Meeting >= '2026-01-10T10:00:00+00:00'", expect: ['Bob'] },
    { sql: "SELECT Name FROM Contacts WHERE Meeting = '2026-01-10T10:30:00+01:00'", expect: ['Alice'] },
    { sql: "SELECT Name FROM Contacts WHERE _ctime > '2026-01-05T10:02:00Z'", expect: ['Diana', 'alice lower', null] },
    { sql: "SELECT Name, Created FROM Contacts WHERE Created BETWEEN '2026-01-05 10:01' AND '2026-01-05 10:02'", expect: [{ Name: 'Bob', Created: '2026-01-05T10:01:00.000+00:00' }, { Name: 'Charlie', Created: '2026-01-05T10:02:00.000+00:00' }] },
    { sql: 'SELECT Name FROM Contacts WHERE _creator = ?', parameters: [BOB], expect: ['Bob', 'Diana', null] },
    { sql: 'SELECT Name, Author FROM Contacts WHERE Author = ? AND Age > 0', parameters: [ALICE], expect: [{ Name: 'Alice', Author: ALICE }, { Name: 'Charlie', Author: ALICE }] },
    { sql: 'SELECT Name, Duration FROM Contacts WHERE Duration > 60', expect: [{ Name: 'Alice', Duration: 5400 }] },
    { sql: 'SELECT Name FROM Contacts WHERE Duration = 0', expect: ['Diana'] },
    { sql: 'SELECT Name, Rating FROM Contacts WHERE Rating >= 4', expect: [{ Name: 'Alice', Rating: 4 }, { Name: 'Charlie', Rating: 5 }] },
    { sql: "SELECT Name, Code FROM Contacts WHERE Code > '0004'", expect: [{ Name: 'alice lower', Code: '0005' }, { Name: null, Code: '0006' }] },
    { sql: "SELECT Photos, Files, Place FROM Contacts WHERE Name = 'Alice'", expect: [{ Photos: ['https://img.example/a.png'], Files: [{ name: 'a.pdf', url: 'https://f.example/a.pdf', size: 1 }], Place: { lng: 13.4, lat: 52.5 } }] },
    { sql: "SELECT Name, Tags FROM Contacts WHERE Name = 'alice lower'", expect: [{ Name: 'alice lower', Tags: null }] },
    { sql: "select name from contacts where CITY = 'Hamburg'", expect: ['Diana'] },
  ],
  ordering: [
    { sql: 'SELECT Name FROM Contacts ORDER BY City, Name', expect: ['alice lower', null, 'Bob', 'Alice', 'Charlie', 'Diana'] },
    { sql: 'SELECT Name FROM Contacts ORDER BY Name', expect: [null, 'Alice', 'Bob', 'Charlie', 'Diana', 'alice lower'] },
    { sql: 'SELECT Name AS n FROM Contacts WHERE Age > 0 ORDER BY n DESC', expect: [{ n: 'Diana' }, { n: 'Charlie' }, { n: 'Bob' }, { n: 'Alice' }] },
    { sql: 'SELECT Name, Age FROM Contacts WHERE Age > 0 ORDER BY 2 DESC', expect: [{ Name: 'Charlie', Age: 35 }, { Name: 'Alice', Age: 30 }, { Name: 'Diana', Age: 28 }, { Name: 'Bob', Age: 25 }] },
    { sql: 'SELECT Name FROM Contacts WHERE Tags IS NOT NULL ORDER BY Tags', expect: ['Bob', 'Alice', 'Charlie'] },
    { sql: 'SELECT Name FROM Contacts ORDER BY Active DESC, Birthday', expect: ['Diana', 'Alice', 'alice lower', null, 'Charlie', 'Bob'] },
    { sql: 'SELECT Name FROM Contacts ORDER BY _mtime DESC LIMIT 2', expect: [null, 'alice lower'] },
  ],
  limits: [
    { sql: 'SELECT Name FROM Contacts ORDER BY Name LIMIT 2 OFFSET 1', expect: ['Alice', 'Bob'] },
    { sql: 'SELECT Name FROM Contacts LIMIT 4, 1', expect: ['alice lower'] },
    { sql: 'SELECT Name FROM Contacts LIMIT ? OFFSET ?', parameters: [1, 1], expect: ['Bob'] },
    { sql: 'SELECT City, COUNT(*) FROM Contacts GROUP BY City LIMIT 1 OFFSET 1', expect: [{ City: 'Munich', 'COUNT(*)': 2 }] },
  ],
  aggregates: [
    {
      sql: 'SELECT City, COUNT(*), SUM(Age), AVG(Age), MIN(Age), MAX(Age) FROM Contacts GROUP BY City',
      expect: [
        { City: null, 'COUNT(*)': 1, 'SUM(Age)': null, 'AVG(Age)': null, 'MIN(Age)': null, 'MAX(Age)': null },
        { City: 'Munich', 'COUNT(*)': 2, 'SUM(Age)': 22.5, 'AVG(Age)': 11.25, 'MIN(Age)': -2.5, 'MAX(Age)': 25 },
        { City: 'Berlin', 'COUNT(*)': 2, 'SUM(Age)': 65, 'AVG(Age)': 32.5, 'MIN(Age)': 30, 'MAX(Age)': 35 },
        { City: 'Hamburg', 'COUNT(*)': 1, 'SUM(Age)': 28, 'AVG(Age)': 28, 'MIN(Age)': 28, 'MAX(Age)': 28 },
      ],
    },
    {
      sql: 'SELECT City, COUNT(*) FROM Contacts GROUP BY City',
      convertKeys: false,
      expect: [{ c002: null, 'COUNT(*)': 1 }, { c002: '111111', 'COUNT(*)': 2 }, { c002: '222222', 'COUNT(*)': 2 }, { c002: '333333', 'COUNT(*)': 1 }],
    },
    { sql: 'SELECT City, COUNT(*) AS n FROM Contacts GROUP BY City ORDER BY n DESC, City', expect: [{ City: 'Munich', n: 2 }, { City: 'Berlin', n: 2 }, { City: null, n: 1 }, { City: 'Hamburg', n: 1 }] },
    { sql: 'SELECT City, COUNT(*) FROM Contacts GROUP BY City HAVING COUNT(*) > 1', expect: [{ City: 'Munich', 'COUNT(*)': 2 }, { City: 'Berlin', 'COUNT(*)': 2 }] },
    { sql: "SELECT City, MAX(Age) AS oldest FROM Contacts GROUP BY City HAVING oldest >= 28 AND City != 'Hamburg'", expect: [{ City: 'Berlin', oldest: 35 }] },
    { sql: 'SELECT DISTINCT City FROM Contacts', expect: [{ City: null }, { City: 'Munich' }, { City: 'Berlin' }, { City: 'Hamburg' }] },
    { sql: 'SELECT DISTINCT Active FROM Contacts ORDER BY Active DESC', expect: [{ Active: true }, { Active: false }] },
    { sql: 'SELECT DISTINCT City, Active FROM Contacts WHERE City IS NOT NULL', expect: [{ City: 'Munich', Active: false }, { City: 'Berlin', Active: false }, { City: 'Berlin', Active: true }, { City: 'Hamburg', Active: true }] },
    { sql: 'SELECT COUNT(Tags), COUNT(DISTINCT City), COUNT(People), COUNT(Name), COUNT(1) FROM Contacts', expect: [{ 'COUNT(Tags)': 3, 'COUNT(DISTINCT City)': 3, 'COUNT(People)': 2, 'COUNT(Name)': 5, 'COUNT(1)': 6 }] },
    {
      sql: 'SELECT MIN(Birthday), MAX(Meeting), MIN(_ctime), MAX(Name), MIN(Code), MAX(City) FROM Contacts',
      expect: [{ 'MIN(Birthday)': '1989-07-14T00:00:00+00:00', 'MAX(Meeting)': '2026-01-10T14:00:00+00:00', 'MIN(_ctime)': '2026-01-05T10:00:00.000+00:00', 'MAX(Name)': 'alice lower', 'MIN(Code)': '0001', 'MAX(City)': 'Munich' }],
    },
    // One group per option, as the original groups a multiple-select column: ['red', 'green'] counts in both.
    { sql: 'SELECT Tags, COUNT(*) FROM Contacts GROUP BY Tags', expect: [{ Tags: null, 'COUNT(*)': 3 }, { Tags: ['blue'], 'COUNT(*)': 1 }, { Tags: ['green'], 'COUNT(*)': 2 }, { Tags: ['red'], 'COUNT(*)': 1 }] },
    { sql: 'SELECT DISTINCT Tags FROM Contacts', expect: [{ Tags: null }, { Tags: ['blue'] }, { Tags: ['green'] }, { Tags: ['red', 'green'] }] },
    { sql: 'SELECT Active, COUNT(*) FROM Contacts GROUP BY Active', expect: [{ Active: false, 'COUNT(*)': 4 }, { Active: true, 'COUNT(*)': 2 }] },
    { sql: 'SELECT Birthday, COUNT(*) FROM Contacts WHERE Birthday IS NOT NULL GROUP BY Birthday ORDER BY Birthday DESC LIMIT 1', expect: [{ Birthday: '1999-12-31T00:00:00+00:00', 'COUNT(*)': 1 }] },
    { sql: 'SELECT _creator, COUNT(*) FROM Contacts GROUP BY _creator', expect: [{ _creator: ALICE, 'COUNT(*)': 3 }, { _creator: BOB, 'COUNT(*)': 3 }] },
    { sql: 'SELECT SUM(Duration), AVG(Rating), MAX(Größe), COUNT(DISTINCT `Größe`) FROM Contacts', expect: [{ 'SUM(Duration)': 5460, 'AVG(Rating)': 2.75, 'MAX(Größe)': 1.8, 'COUNT(DISTINCT `Größe`)': 2 }] },
    { sql: 'SELECT DISTINCT COUNT(*) FROM Contacts', expect: [{ 'COUNT(*)': 6 }] },
    { sql: 'SELECT COUNT(*) FROM Contacts HAVING COUNT(*) > 10', expect: [] },
    { sql: 'SELECT DISTINCT City, COUNT(*) AS n FROM Contacts GROUP BY City HAVING n = 1 ORDER BY City DESC', expect: [{ City: 'Hamburg', n: 1 }, { City: null, n: 1 }] },
    { sql: 'SELECT COUNT(*), SUM(Age), MAX(Name) FROM Contacts WHERE Age > 100', expect: [{ 'COUNT(*)': 0, 'SUM(Age)': null, 'MAX(Name)': null }] },
    { sql: 'SELECT City, COUNT(*) FROM Contacts GROUP BY 1 ORDER BY COUNT(*), 1 DESC', expect: [{ City: 'Hamburg', 'COUNT(*)': 1 }, { City: null, 'COUNT(*)': 1 }, { City: 'Berlin', 'COUNT(*)': 2 }, { City: 'Munich', 'COUNT(*)': 2 }] },
  ],
};

function normalize(sqlText: string, results: Array<Record<string, unknown>>, expected: Case['expect']): unknown {
  const grouped = /COUNT|SUM|AVG|MIN|MAX|DISTINCT|GROUP BY/i.test(sqlText);
  const rows = grouped ? results : results.map(({ _id, ...rest }) => rest);
  if (expected.length > 0 && (typeof expected[0] === 'string' || expected[0] === null)) return rows.map((r) => r.Name ?? r.name ?? null);
  return rows;
}

describe.each(DIALECTS)('SQL dialect table (%s)', (dialect) => {
  let t: TestApp;
  let g: SqlGateway;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await sqlGateway(t);
  });
  afterAll(() => t.close());

  for (const [group, cases] of Object.entries(CASES)) {
    describe(group, () => {
      it.each(cases.map((c) => [c.sql, c] as const))('%s', async (_label, c) => {
        const { results } = await g.query(c.sql, { parameters: c.parameters, convert_keys: c.convertKeys ?? true });
        expect(normalize(c.sql, results, c.expect)).toEqual(c.expect);
      });
    });
  }

  it('answers every plain row with its _id', async () => {
    const { results } = await g.query('SELECT Age FROM Contacts ORDER BY Age DESC LIMIT 2', { convert_keys: true });
    expect(results).toEqual([
      { _id: 'row-charlie-0000000003', Age: 35 },
      { _id: 'row-alice-000000000001', Age: 30 },
    ]);
  });
});
