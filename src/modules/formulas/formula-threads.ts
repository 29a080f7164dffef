import type { Worker } from 'node:worker_threads';
import { startThread } from '../../shared/start-thread.js';
import { EventLoopTurns } from '../../shared/event-loop-turns.js';
import { ThreadPool, ThreadTimeoutError, type ThreadOwner } from '../../shared/thread-pool.js';
import { evaluateBatch, storeFormulaCells, type FormulaCells } from './batch.js';
import { FormulaPlan, type PlanContext, type PlanRow, type PlanTable } from './table-plan.js';

/** A batch with fewer formula cells (rows x formula columns) runs on the main thread: a thread hop costs more. */
export const THREAD_MIN_CELLS = 1000;
/** Rows sent to a thread at once: at the time limit, the rows of the chunk under way and after it get error cells. */
const CHUNK_ROWS = 200;
/** Heap of one formula thread: a batch that needs more fails alone (its cells become errors), not the process. */
const THREAD_HEAP_MB = 256;

export interface FormulaThreadsOptions {
  /** FORMULA_THREADS: threads for large batches (0 = every batch on the main thread, yielding between rows). */
  threads: number;
  /** FORMULA_BATCH_TIMEOUT_MS: the time limit of one batch; cells still unevaluated at the limit become errors. */
  timeoutMs: number;
  /** Smallest batch (rows x formula columns) sent to a thread; THREAD_MIN_CELLS unless set (benchmarks). */
  minThreadCells?: number;
}

/**
 * Computes the formula cells of a batch of rows within a time limit (issue #24). A large batch runs on
 * a formula thread (a ThreadPool; one base holds at most half the threads); at the limit the thread is
 * terminated and replaced. A small batch runs here, letting other requests take turns between rows.
 * Either way the cells still unevaluated at the limit become empty (the error value) and the write goes on.
 */
export class FormulaThreads {
  private readonly pool: ThreadPool;
  /** Batches computed on threads so far (tests and diagnostics tell the two paths apart by it). */
  threadBatches = 0;

  constructor(readonly options: FormulaThreadsOptions) {
    this.pool = new ThreadPool({ threads: options.threads, name: 'formula thread', start: startFormulaThread, rebuildError: (f) => new Error(String(f.message ?? 'formula thread error')) });
  }

  /** Set the formula cells of `rows` (in place); answers the number of rows left with error cells by the time limit. */
  async compute(table: PlanTable, rows: PlanRow[], ctx: PlanContext, owner?: ThreadOwner): Promise<number> {
    const plan = FormulaPlan.of(table);
    if (!plan || rows.length === 0) return 0;
    const deadline = performance.now() + this.options.timeoutMs;
    const offThread = this.pool.enabled && rows.length * plan.keys.length >= (this.options.minThreadCells ?? THREAD_MIN_CELLS);
    if (offThread) this.threadBatches++;
    const done = offThread ? await this.onThreads(plan, table, rows, ctx, deadline, owner) : await onMainThread(plan, rows, ctx, deadline);
    for (const row of rows.slice(done)) storeFormulaCells(row, plan.keys, undefined);
    return rows.length - done;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  /** Rows computed, chunk by chunk, until the deadline. */
  private async onThreads(plan: FormulaPlan, table: PlanTable, rows: PlanRow[], ctx: PlanContext, deadline: number, owner?: ThreadOwner): Promise<number> {
    const columns = table.columns.map(({ key, name, type, data }) => ({ key, name, type, data }));
    let done = 0;
    while (done < rows.length) {
      const left = Math.floor(deadline - performance.now());
      if (left <= 0) break;
      const chunk = rows.slice(done, done + CHUNK_ROWS).map(({ _ctime, _mtime, _creator, _last_modifier, data }) => ({ _ctime, _mtime, _creator, _last_modifier, data }));
      let cells: FormulaCells;
      try {
        cells = (await this.pool.run({ table: { columns }, rows: chunk, ctx }, left, owner)) as FormulaCells;
      } catch (error) {
        if (error instanceof ThreadTimeoutError) break;
        // The thread ran out of memory (or crashed): this chunk's cells are errors, the next chunk gets a new thread.
        if ((error as { code?: unknown }).code !== 'ERR_WORKER_OUT_OF_MEMORY') throw error;
        cells = [];
      }
      for (let i = 0; i < chunk.length; i++) storeFormulaCells(rows[done + i]!, plan.keys, cells[i]);
      done += chunk.length;
    }
    return done;
  }
}

/** Rows computed here until the deadline, yielding to the event loop every few milliseconds. */
async function onMainThread(plan: FormulaPlan, rows: PlanRow[], ctx: PlanContext, deadline: number): Promise<number> {
  const turns = new EventLoopTurns();
  for (let i = 0; i < rows.length; i++) {
    if (performance.now() > deadline) return i;
    plan.apply(rows[i]!, ctx);
    await turns.pass();
  }
  return rows.length;
}

/** A formula thread runs formula-thread.ts (dist/formula-thread.js from the bundle). */
function startFormulaThread(): Worker {
  return startThread(import.meta.url, 'formula-thread', { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
}
