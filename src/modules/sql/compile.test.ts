/**
 * The compiler without a database: what reaches the engine is fixed SQL text plus bound values, and
 * everything outside the allow-list is refused with a message naming it.
 */
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { DialectName } from '../../db/index.js';
import { parseStatement } from './parser.js';
import { MAX_DEPTH } from './predicates.js';
import { tablesOf } from './schema.js';
import { planSelect } from './select.js';
import { bindParameters } from './values.js';
import { planWrite } from './write.js';

const dbs = {
  sqlite: new Kysely<unknown>({
    dialect: { createAdapter: () => new SqliteAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new SqliteIntrospector(db), createQueryCompiler: () => new SqliteQueryCompiler() },
  }),
  postgres: new Kysely<unknown>({
    dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() },
  }),
};

const column = (key: string, name: string, type: string, data: unknown = null) => ({ key, name, type, data });
const TABLES = tablesOf({
  tables: [
    {
      _id: 't001',
      name: 'Main Table',
      columns: [
        column('0000', 'Name', 'text'),
        column('aaaa', 'Age', 'number'),
        column('bbbb', 'Status', 'single-select', { options: [{ id: '1', name: 'open' }, { id: '2', name: 'done' }] }),
        column('cccc', 'Tags', 'multiple-select', { options: [] }),
        column('dddd', 'Due', 'date'),
        column('eeee', 'Done', 'checkbox'),
        column('ffff', 'Files', 'file'),
        column('gggg', "Robert'); DROP TABLE base_rows;--", 'text'),
        column('bad key!', 'Unsafe', 'text'),
      ],
    },
  ],
});

function compile(text: string, dialect: DialectName = 'sqlite', parameters: unknown[] = []) {
  const parsed = parseStatement(text);
  const bindings = bindParameters(parsed.placeholders, parameters);
  const type = String(parsed.ast.type);
  if (type === 'select') {
    const plan = planSelect(parsed.ast, { dialect, tables: TABLES, baseId: 7, bindings, text, convertKeys: false });
    return { plan, compiled: plan.query.compile(dbs[dialect]) };
  }
  const plan = planWrite(parsed.ast, { dialect, tables: TABLES, bindings });
  const where = plan.kind === 'insert' ? undefined : plan.where.compile(dbs[dialect]);
  return { plan, compiled: where };
}

describe.each(['sqlite', 'postgres'] as const)('compiled SQL (%s)', (dialect) => {
  it('binds every value; user text never reaches the SQL text (column keys and ids only as checked literals)', () => {
    const hostile = "x' OR 1=1; DROP TABLE base_rows; --";
    const { compiled } = compile(
      `SELECT Name, \`Robert'); DROP TABLE base_rows;--\` FROM \`Main Table\` WHERE Name = '${hostile.replace(/'/g, "''")}' AND Age IN (1, 2) AND Status = ? ORDER BY Age DESC LIMIT 5, 10`,
      dialect,
      ['open'],
    );
    expect(compiled!.sql).not.toMatch(/DROP|OR 1=1|Robert|open|Main Table/);
    expect(compiled!.parameters).toEqual(expect.arrayContaining([hostile, 1, 2, 'open', 10, 5]));
    expect(compiled!.sql).toMatch(/desc nulls last, id asc limit (\?|\$\d+) offset (\?|\$\d+)$/);
  });

  it('scopes every query to the base and table (ids of the checked shape as literals: row indexes match them)', () => {
    for (const text of ['SELECT * FROM `Main Table`', 'SELECT COUNT(*) FROM t001', 'SELECT DISTINCT Status FROM `Main Table`']) {
      const { compiled } = compile(text, dialect);
      expect(compiled!.sql).toMatch(/base_rows\.base_id = 7 and base_rows\.table_id = 't001'/);
    }
  });

  it('compiles UPDATE and DELETE conditions with bound values only', () => {
    const { plan, compiled } = compile("UPDATE `Main Table` SET Name = 'x', Tags = ('a', 'b') WHERE Age BETWEEN ? AND ?", dialect, [1, 9]);
    expect(plan).toMatchObject({ kind: 'update', set: { Name: 'x', Tags: ['a', 'b'] } });
    expect(compiled!.parameters).toEqual(expect.arrayContaining([1, 9]));
    expect(compiled!.sql).not.toContain('9');
  });

  it('nests long AND/OR chains as a balanced tree (SQLite refuses expressions deeper than 1000)', () => {
    const terms = Array.from({ length: 3000 }, (_, i) => `Age = ${i}`).join(' OR ');
    const { compiled } = compile(`SELECT Name FROM \`Main Table\` WHERE ${terms}`, dialect);
    let depth = 0;
    let max = 0;
    for (const ch of compiled!.sql) {
      if (ch === '(') max = Math.max(max, ++depth);
      else if (ch === ')') depth--;
    }
    expect(max).toBeLessThan(40);
  });
});

describe('placeholders bind in text order', () => {
  it.each([
    ['SELECT Name FROM `Main Table` WHERE Age BETWEEN ? AND ? LIMIT ?, ?', [1, 2, 3, 4], { between: [1, 2], limit: 4, offset: 3 }],
    ['SELECT Name FROM `Main Table` WHERE Age BETWEEN ? AND ? LIMIT ? OFFSET ?', [1, 2, 4, 3], { between: [1, 2], limit: 4, offset: 3 }],
  ])('%s', (text, parameters, expected) => {
    const { compiled } = compile(text, 'sqlite', parameters);
    const p = compiled!.parameters;
    expect(p.slice(-2)).toEqual([expected.limit, expected.offset]);
    expect(p).toEqual(expect.arrayContaining(expected.between));
  });

  it('binds INSERT values row by row', () => {
    const { plan } = compile('INSERT INTO `Main Table` (Name, Age) VALUES (?, ?), (?, 5)', 'sqlite', ['a', 1, 'b']);
    expect(plan).toMatchObject({ kind: 'insert', rows: [{ Name: 'a', Age: 1 }, { Name: 'b', Age: 5 }] });
  });
});

describe('the allow-list', () => {
  it.each([
    ['SELECT * FROM `Main Table` WHERE Name = Age', 'Cannot compare Name (string) with Age (number).'],
    ['SELECT * FROM `Main Table` WHERE Files IS NULL', 'Files cannot be used in WHERE.'],
    ['SELECT Files, COUNT(*) FROM `Main Table` GROUP BY Files', 'Files cannot be used in GROUP BY or DISTINCT.'],
    ['SELECT * FROM `Main Table` ORDER BY Files', 'Files cannot be used in ORDER BY.'],
    ['SELECT Unsafe FROM `Main Table`', "Column 'Unsafe' not found in table 'Main Table'."],
    ['SELECT * FROM `Main Table` WHERE Name', 'Name is not a condition; compare it with a value.'],
    ['SELECT * FROM `Main Table` WHERE Name IS 5', 'IS must be followed by NULL, TRUE or FALSE.'],
    ['SELECT * FROM `Main Table` WHERE Age IS TRUE', 'IS TRUE / IS FALSE need a checkbox column; Age is number.'],
    ['SELECT * FROM `Main Table` WHERE Name LIKE Name', 'LIKE needs a text pattern on its right side.'],
    ["SELECT * FROM `Main Table` WHERE 'a' LIKE 'b'", 'LIKE needs a column on its left side.'],
    ['SELECT * FROM `Main Table` WHERE Age BETWEEN 1', 'SQL syntax error at line 1, column 47 (unexpected end of statement).'],
    ['SELECT * FROM `Main Table` WHERE Tags BETWEEN 1 AND 2', 'BETWEEN does not support Tags (list).'],
    ['SELECT * FROM `Main Table` WHERE Age IN (Name)', 'IN accepts only constant values and ? parameters.'],
    ['SELECT * FROM `Main Table` WHERE Age XOR 1', 'Operator XOR is not supported in WHERE.'],
    ['SELECT * FROM `Main Table` WHERE nosuchfn(Age) = 1', 'Function nosuchfn is not supported.'],
    ['SELECT * FROM `Main Table` WHERE exp(Age) LIKE 1', 'Operator LIKE cannot be combined with function exp (computed by the formula engine).'],
    ['SELECT * FROM `Main Table` WHERE abs(Name) = 1', 'abs needs numbers; Name is string.'],
    ['SELECT * FROM `Main Table` WHERE Age = -Age', 'Unsupported expression in WHERE (unary_expr).'],
    ['SELECT MEDIAN(Age) FROM `Main Table`', 'Function MEDIAN is not supported.'],
    ['SELECT GROUP_CONCAT(Name) FROM `Main Table`', 'Function GROUP_CONCAT is not supported; aggregates are COUNT, SUM, AVG, MIN and MAX.'],
    ['SELECT MIN(Tags) FROM `Main Table`', 'MIN does not support Tags (a list).'],
    ['SELECT SUM(*) FROM `Main Table`', 'SUM accepts a column; expressions and functions are not supported.'],
    ['SELECT SUM(1) FROM `Main Table`', 'SUM needs a column.'],
    ['SELECT COUNT(*) OVER () FROM `Main Table`', 'Window functions are not supported.'],
    ['SELECT 1 FROM `Main Table`', 'Only columns, expressions and COUNT, SUM, AVG, MIN, MAX can be selected.'],
    ['SELECT *, Name FROM `Main Table`', '* cannot be combined with other select items.'],
    ['SELECT DISTINCT * FROM `Main Table`', '* cannot be used with DISTINCT, GROUP BY or aggregates.'],
    ['SELECT Name FROM `Main Table` GROUP BY 3', 'Position 3 is not in the select list.'],
    ['SELECT DISTINCT Name, COUNT(*) FROM `Main Table`', 'Name must appear in GROUP BY or be used in an aggregate.'],
    ['SELECT DISTINCT COUNT(*) FROM `Main Table` GROUP BY Status', 'DISTINCT with GROUP BY needs every GROUP BY column in the select list.'],
    ['SELECT DISTINCT Status, COUNT(*) FROM `Main Table` GROUP BY Status', undefined],
    ['SELECT COUNT(*) FROM `Main Table` HAVING COUNT(*) > 1', undefined],
    ['SELECT COUNT(*) AS n FROM `Main Table` GROUP BY n', 'GROUP BY must name a column or an expression.'],
    ['SELECT Status, COUNT(*) FROM `Main Table` GROUP BY Status HAVING Tags = 1', 'Tags must appear in GROUP BY or be used in an aggregate.'],
    ['SELECT x.Name FROM `Main Table`', "Unknown table 'x' in column reference."],
    ['SELECT Name FROM `Main Table` AS m WHERE m.Age > 1', undefined],
    ['SELECT Name FROM other.`Main Table`', 'Only the tables of this base can be queried (no database or schema prefix).'],
    ['SELECT Name FROM `Main Table` t1, `Main Table` t2', "Table 'Main Table' appears twice in FROM; a join needs distinct tables."],
    ['SELECT Name FROM `Main Table` UNION SELECT Name FROM `Main Table`', 'UNION, INTERSECT and EXCEPT are not supported.'],
    ['SELECT SQL_CALC_FOUND_ROWS Name FROM `Main Table`', 'SELECT options are not supported.'],
    ['SELECT Name FROM `Main Table` LOCK IN SHARE MODE', 'Locking reads are not supported.'],
    ['SELECT Name FROM `Main Table` WHERE `Unknown` = 1', "Column 'Unknown' not found in table 'Main Table'."],
    ['UPDATE `Main Table` SET Files = 1', "Column 'Files' (file) cannot be written with SQL."],
    ['UPDATE `Main Table` SET x.Name = 1', "Unknown table 'x' in SET."],
    ['INSERT INTO `Main Table` (Name) VALUES (1) ON DUPLICATE KEY UPDATE Name = 2', 'ON DUPLICATE KEY UPDATE is not supported.'],
    ['SELECT * FROM `Main Table` WHERE Due > 5', 'Comparison with Due expects a date such as \'2024-05-31\' or \'2024-05-31T08:00:00Z\', got 5.'],
    ['SELECT * FROM `Main Table` WHERE Done = 2', 'Comparison with Done expects true or false, got 2.'],
  ])('%s', (text, message) => {
    if (message === undefined) expect(() => compile(text)).not.toThrow();
    else expect(() => compile(text)).toThrow(message);
  });

  it(`refuses conditions nested deeper than ${MAX_DEPTH}`, () => {
    const nested = (n: number) => `SELECT * FROM \`Main Table\` WHERE ${'NOT ('.repeat(n)}Age = 1${')'.repeat(n)}`;
    expect(() => compile(nested(MAX_DEPTH - 1))).not.toThrow();
    expect(() => compile(nested(MAX_DEPTH + 1))).toThrow('The condition is nested too deeply.');
  });

  it('refuses stacked statements, oversized input and parser stack exhaustion', () => {
    expect(() => parseStatement('SELECT 1; SELECT 2')).toThrow('Only one statement per request is allowed.');
    expect(() => parseStatement(`SELECT '${'x'.repeat(1_000_000)}'`)).toThrow(/is longer than 1000000 characters/);
    expect(() => parseStatement(`SELECT * FROM t WHERE ${'('.repeat(20_000)}a = 1${')'.repeat(20_000)}`)).toThrow(/nested too deeply|syntax error/);
    expect(() => parseStatement('  ')).toThrow('sql is empty.');
    expect(() => parseStatement(';')).toThrow(/sql is empty|syntax error/);
  });
});
