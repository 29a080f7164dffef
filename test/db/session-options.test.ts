import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { connect, postgresSessionOptions, type DbHandle } from '../../src/db/index.js';
import { DIALECTS } from '../helpers/db.js';

/**
 * Issue 34: PostgreSQL connections start with parallel workers and JIT off (PG_PARALLEL_WORKERS, PG_JIT).
 * A misjudged 100-row page of a 1,000,000-row table ran as a parallel scan in 780 ms instead of 0.5 ms,
 * and JIT compiled 40–50 ms into such pages.
 */
describe('postgresSessionOptions', () => {
  it('turns parallel workers and JIT off unless asked, and keeps the schema', () => {
    expect(postgresSessionOptions({})).toBe('-c max_parallel_workers_per_gather=0 -c jit=off');
    expect(postgresSessionOptions({ pgSchema: 't_1', pgParallelWorkers: 2, pgJit: true })).toBe('-c search_path=t_1 -c max_parallel_workers_per_gather=2 -c jit=on');
  });
});

describe.each(DIALECTS.filter((d) => d === 'postgres'))('PostgreSQL session settings (%s)', () => {
  const handles: DbHandle[] = [];
  afterAll(() => Promise.all(handles.map((h) => h.close())));
  const settings = async (options: { pgParallelWorkers?: number; pgJit?: boolean }) => {
    const handle = connect({ databaseUrl: process.env.TEST_DATABASE_URL!, dataDir: '/nonexistent', poolSize: 2, ...options });
    handles.push(handle);
    const { rows } = await sql<{ workers: string; jit: string }>`select current_setting('max_parallel_workers_per_gather') as workers, current_setting('jit') as jit`.execute(handle.db);
    return rows[0];
  };

  it('every connection has them, as configured', async () => {
    expect(await settings({})).toEqual({ workers: '0', jit: 'off' });
    expect(await settings({ pgParallelWorkers: 2, pgJit: true })).toEqual({ workers: '2', jit: 'on' });
  });
});
