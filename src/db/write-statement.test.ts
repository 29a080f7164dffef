import { sql, type CompiledQuery, type DatabaseConnection } from 'kysely';
import { connectionKysely } from './connection-kysely.js';
import { describe, expect, it } from 'vitest';
import type { Executor } from './database.js';
import { PREPARED_MARK, PREPARED_NAMES_MAX, preparedName } from './prepared.js';
import { RecordSet, WriteStatement } from './write-statement.js';

/** A PostgreSQL Kysely that records the statements it is given and answers that the gate passed. */
function recordingDb() {
  const sent: CompiledQuery[] = [];
  const connection: DatabaseConnection = {
    executeQuery: async <R>(query: CompiledQuery) => (sent.push(query), { rows: [{ passed: 1 }] as R[] }),
    streamQuery: () => {
      throw new Error('not used');
    },
  };
  const db = connectionKysely<unknown>(connection);
  return { db: db as unknown as Executor, sent };
}

const NOTES = new RecordSet((gate, records) => sql`notes AS (INSERT INTO notes (body) SELECT n.body FROM ${gate}, json_to_recordset(${records}) AS n(body text))`);
const TAGS = new RecordSet((gate, records) => sql`tags AS (INSERT INTO tags (tag) SELECT t.tag FROM ${gate}, json_to_recordset(${records}) AS t(tag text))`);
const gate = sql`UPDATE base_metadata SET revision = revision + 1 WHERE base_id = ${7} AND version = ${1} RETURNING version`;

function member(notes: string[], tags: string[]): WriteStatement {
  const statement = new WriteStatement('shared');
  // Tags first: the parts still come in the order the sets were made.
  for (const tag of tags) statement.addRecord(TAGS, JSON.stringify({ tag }));
  for (const body of notes) statement.addRecord(NOTES, JSON.stringify({ body }));
  return statement;
}

describe('WriteStatement record sets', () => {
  it('sends the records of every member in one part per set, whatever the number of members: one text, marked to be prepared', async () => {
    const { db, sent } = recordingDb();
    expect(await WriteStatement.together(db, gate, [member(['a'], ['x'])])).toBe(true);
    expect(await WriteStatement.together(db, gate, [member(['b', 'c'], []), member(['d'], ['y', 'z']), member([], ['w'])])).toBe(true);
    const [one, three] = sent;
    expect(one!.sql).toBe(three!.sql);
    expect(one!.sql.endsWith(PREPARED_MARK)).toBe(true);
    // Still a write to what reads a statement's start (db/commit-appendix.ts).
    expect(one!.sql.startsWith('WITH ')).toBe(true);
    expect(one!.sql.indexOf('notes AS')).toBeLessThan(one!.sql.indexOf('tags AS'));
    expect(three!.parameters.slice(2).map((p) => JSON.parse(p as string))).toEqual([
      [{ body: 'b' }, { body: 'c' }, { body: 'd' }],
      [{ tag: 'y' }, { tag: 'z' }, { tag: 'w' }],
    ]);
  });

  it('leaves a statement with a part of its own (a name unique to it) unmarked', async () => {
    const { db, sent } = recordingDb();
    const statement = new WriteStatement();
    statement.addRecord(NOTES, JSON.stringify({ body: 'a' }));
    statement.add(sql`SELECT 1 FROM ${statement.gate}`);
    await statement.execute(db);
    expect(sent[0]!.sql.endsWith(PREPARED_MARK)).toBe(false);
    expect(sent[0]!.sql).toContain('notes AS');
  });
});

describe('preparedName', () => {
  it('names marked texts only, the same name for the same text, and at most PREPARED_NAMES_MAX of them', () => {
    expect(preparedName('SELECT 1')).toBeUndefined();
    const first = preparedName(`SELECT 'first'${PREPARED_MARK}`);
    expect(first).toBeDefined();
    expect(preparedName(`SELECT 'first'${PREPARED_MARK}`)).toBe(first);
    const names = new Set<string>();
    for (let i = 0; i < PREPARED_NAMES_MAX + 10; i++) {
      const name = preparedName(`SELECT ${i}${PREPARED_MARK}`);
      if (name !== undefined) names.add(name);
    }
    expect(names.size).toBeLessThanOrEqual(PREPARED_NAMES_MAX);
    expect(preparedName(`SELECT 'one more'${PREPARED_MARK}`)).toBeUndefined();
    expect(preparedName(`SELECT 'first'${PREPARED_MARK}`)).toBe(first);
  });
});
