import type { Worker } from 'node:worker_threads';
import { startThread } from '../../shared/start-thread.js';
import type { HostCall, ScriptJob, ScriptResult } from './script-sandbox.js';

/** Node's own heap of the script thread (QuickJS's heap is limited separately, per script). */
const THREAD_HEAP_MB = 128;

/**
 * Runs `run_script` jobs on one thread, one at a time, so a script never blocks the server's event loop.
 * A script that does not finish by its wall-clock limit (a native call the interrupt handler cannot
 * reach, a host call that hangs) has its thread terminated; the next job starts a new one.
 */
export class ScriptThreads {
  private worker: Worker | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** Jobs run so far and threads started (the start cost: the first job of a thread loads the WebAssembly). */
  readonly stats = { jobs: 0, threads: 0 };

  run(job: ScriptJob, host: HostCall, wallMs: number): Promise<ScriptResult> {
    const next = this.queue.then(() => this.runOne(job, host, wallMs));
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.queue;
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }

  private thread(): Worker {
    if (!this.worker) {
      this.worker = startThread(import.meta.url, 'script-thread', { resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB } });
      this.worker.unref();
      this.stats.threads++;
    }
    return this.worker;
  }

  private runOne(job: ScriptJob, host: HostCall, wallMs: number): Promise<ScriptResult> {
    const worker = this.thread();
    this.stats.jobs++;
    return new Promise<ScriptResult>((resolve) => {
      const end = (result: ScriptResult, kill: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (kill && this.worker === worker) {
          this.worker = null;
          void worker.terminate();
        }
        resolve(result);
      };
      const timer = setTimeout(() => end({ ok: false, output: '', error: `time limit: the script did not finish within ${wallMs} ms`, cpuMs: 0 }, true), wallMs);
      const onMessage = (message: { type: string; call?: number; method?: string; args?: unknown[]; result?: ScriptResult }) => {
        if (message.type === 'done') return end(message.result!, false);
        host(message.method!, message.args ?? []).then(
          (value) => worker.postMessage({ type: 'answer', call: message.call, ok: true, value }),
          (error: unknown) => worker.postMessage({ type: 'answer', call: message.call, ok: false, error: errorMessage(error) }),
        );
      };
      const onError = (error: Error) => end({ ok: false, output: '', error: `the script thread failed: ${error.message}`, cpuMs: 0 }, true);
      const onExit = () => end({ ok: false, output: '', error: 'the script thread stopped', cpuMs: 0 }, true);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ type: 'run', job });
    });
  }
}

/** An error's message for the script (the API's `error_msg` when the rows service refused). */
export function errorMessage(error: unknown): string {
  if (error && typeof error === 'object' && 'body' in error) {
    const body = (error as { body?: { error_msg?: unknown } }).body;
    if (typeof body?.error_msg === 'string') return body.error_msg;
  }
  return error instanceof Error ? error.message : String(error);
}
