import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../db/index.js';
import type { BaseMetadata } from './metadata.js';
import { ReadMetadata } from './read-metadata.js';

/** ReadMetadata keeps parsed documents within its byte bound (and a document above it not at all). */
describe('read metadata', () => {
  const setUp = (maxBytes: number) => {
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new SQLite(':memory:') }) });
    const loads: number[] = [];
    // A document of about `size` characters per base: base id × 100,000.
    const load = async (base: { id: number }): Promise<BaseMetadata> => {
      loads.push(base.id);
      return { version: 1, format_version: 1, settings: { pad: 'x'.repeat(base.id * 100_000) }, tables: [] };
    };
    return { db, loads, cache: new ReadMetadata(db, load, maxBytes) };
  };

  it('keeps within its byte bound, least recently read out first', async () => {
    const { db, loads, cache } = setUp(1_000_000);
    await db.schema.createTable('base_metadata').addColumn('base_id', 'integer').addColumn('version', 'integer').execute();
    for (const id of [1, 2, 3, 20]) await db.insertInto('base_metadata').values({ base_id: id, version: 1 } as never).execute();
    const read = (id: number) => cache.read({ id, uuid: `u${id}` });

    await read(1);
    await read(2);
    expect(cache.stats).toEqual({ bases: 2, bytes: expect.any(Number) });
    expect(cache.stats.bytes).toBeGreaterThan(2 * 300_000);
    await read(1); // kept: no load
    expect(loads).toEqual([1, 2]);
    await read(3); // 2 × (100 + 200 + 300) KB above 1 MB: base 2, read least recently, goes
    expect(cache.stats.bytes).toBeLessThanOrEqual(1_000_000);
    await read(1);
    await read(3);
    await read(2);
    expect(loads).toEqual([1, 2, 3, 2]);
    expect(cache.stats.bytes).toBeLessThanOrEqual(1_000_000);

    // A document above the whole bound is served, never kept.
    const big = await read(20);
    expect(big.settings.pad).toHaveLength(2_000_000);
    await read(20);
    expect(loads.filter((id) => id === 20)).toHaveLength(2);
    expect(cache.stats.bytes).toBeLessThanOrEqual(1_000_000);
    await db.destroy();
  });
});
