import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, DummyDriver } from 'kysely';
import { describe, expect, it } from 'vitest';
import { postgresSearchCondition, trigramMatch } from './search-index.js';

const pg = new Kysely<unknown>({
  dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() },
});

describe('search index queries', () => {
  it('looks a term up as the AND of its trigrams, each once, across terms', () => {
    expect(trigramMatch(['abcd'])).toBe('"abc" AND "bcd"');
    expect(trigramMatch(['abc', 'zabc'])).toBe('"abc" AND "zab"');
    expect(trigramMatch(['a b%'])).toBe('"a b" AND " b%"');
  });

  it("escapes LIKE's wildcards and its escape character in PostgreSQL's condition", () => {
    const compiled = pg.selectFrom('base_rows' as never).selectAll().where(postgresSearchCondition(['50%_off', 'a\\b'])).compile();
    expect(compiled.parameters).toEqual(['%50\\%\\_off%', '%a\\\\b%']);
    expect(compiled.sql).toContain('lower((base_rows.data)::text collate "C") like $1::text and lower((base_rows.data)::text collate "C") like $2::text');
  });
});
