import { CompiledQuery } from 'kysely';
import { describe, expect, it } from 'vitest';
import { databaseFault } from '../../db/index.js';
import { AppError } from '../../shared/errors.js';
import { ThreadTimeoutError } from '../../shared/thread-pool.js';
import { PAGE_TOO_LARGE, threadReader, type ReaderThreads } from './thread-reads.js';

/** Reader threads that answer `answer` (or throw it) and record what they were asked. */
function threads(answer: () => Array<Record<string, unknown>>) {
  const asked: unknown[][] = [];
  const fake: ReaderThreads = {
    readsFile: async () => true,
    query: async (...args) => {
      asked.push(args);
      return answer();
    },
  };
  return { fake, asked };
}

describe('threadReader', () => {
  it('sends the compiled statement with its parameters, the owner and the time limit, and answers its rows', async () => {
    const { fake, asked } = threads(() => [{ id: 7, r: 'text' }]);
    let reads = 0;
    const db = threadReader({ threads: fake, timeoutMs: 1234, minRows: 1, nearIds: 0 }, 42, () => reads++);
    const rows = await db.selectFrom('base_rows').select(['id']).where('base_id', '=', 42).execute();
    expect(rows).toEqual([{ id: 7, r: 'text' }]);
    expect(asked).toEqual([['select "id" from "base_rows" where "base_id" = ?', [42], 42, 1234]]);
    expect(reads).toBe(1);
    expect((await db.executeQuery(CompiledQuery.raw('select 1', []))).rows).toEqual([{ id: 7, r: 'text' }]);
    expect(reads).toBe(2);
  });

  it('fails a read past its limit as an interrupted statement, which the error handler answers with 503', async () => {
    const { fake } = threads(() => {
      throw new ThreadTimeoutError(50);
    });
    const db = threadReader({ threads: fake, timeoutMs: 50, minRows: 1, nearIds: 0 }, 1, () => {});
    const error = await db.executeQuery(CompiledQuery.raw('select 1', [])).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ThreadReadTimeout', code: 'SQLITE_INTERRUPT' });
    expect(databaseFault(error)).toMatchObject({ status: 503, message: 'The database did not answer in time. Please retry later.', retryAfter: 5 });
  });

  it("answers 400 when a page's rows do not fit the thread's heap, and passes other errors on", async () => {
    const oom = Object.assign(new Error('Worker terminated due to reaching memory limit'), { code: 'ERR_WORKER_OUT_OF_MEMORY' });
    const db = threadReader({ threads: threads(() => { throw oom; }).fake, timeoutMs: 50, minRows: 1, nearIds: 0 }, 1, () => {});
    const error = await db.executeQuery(CompiledQuery.raw('select 1', [])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ statusCode: 400, body: { error_msg: PAGE_TOO_LARGE } });
    const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
    const other = threadReader({ threads: threads(() => { throw busy; }).fake, timeoutMs: 50, minRows: 1, nearIds: 0 }, 1, () => {});
    expect(await other.executeQuery(CompiledQuery.raw('select 1', [])).catch((e: unknown) => e)).toBe(busy);
  });

  it('has no transactions', async () => {
    const db = threadReader({ threads: threads(() => []).fake, timeoutMs: 50, minRows: 1, nearIds: 0 }, 1, () => {});
    await expect(db.transaction().execute(async () => 1)).rejects.toThrow('reader threads have no transactions');
  });
});
