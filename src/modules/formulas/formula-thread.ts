import { parentPort } from 'node:worker_threads';
import { evaluateBatch, type FormulaBatch } from './batch.js';

/**
 * The code of one formula thread (started by formula-threads.ts; bundled as dist/formula-thread.js):
 * it computes the formula cells of a batch of rows and sends them back.
 */
parentPort?.on('message', (job: FormulaBatch & { id: number }) => {
  try {
    parentPort!.postMessage({ id: job.id, ok: true, result: evaluateBatch(job) });
  } catch (error) {
    const e = (error ?? {}) as { name?: unknown; message?: unknown };
    parentPort!.postMessage({ id: job.id, ok: false, error: { name: e.name, message: String(e.message) } });
  }
});
