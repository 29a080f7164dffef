import type { Worker } from 'node:worker_threads';
import { startThread } from '../../shared/start-thread.js';
import type { HostCall, ScriptJob, ScriptResult } from './script-sandbox.js';
import { threadCpuMs } from './thread-cpu.js';

/** Node's own heap of the script thread (QuickJS's heap is limited separately, per script). */
const THREAD_HEAP_MB = 128;

/**
 * The CPU watchdog: while a script runs, the thread's CPU time is read every WATCH_MS; past the script's
 * CPU limit + WATCH_GRACE_MS the thread is terminated. Inside the interpreter QuickJS stops the script at
 * the limit itself (its interrupt handler); the watchdog catches what that handler cannot reach: one long
 * native call (a huge repeat/join/sort, JSON of a big value) or many of them between two interrupt checks.
 */
export const WATCH_MS = 10;
export const WATCH_GRACE_MS = 25;

/**
 * Runs `run_script` jobs on one thread, one at a time, so a script never blocks the server's event loop.
 * A script past its CPU limit (watched from here: see WATCH_MS) or its wall-clock limit (a host call that
 * hangs; or where the thread's CPU time cannot be read) has its thread terminated, and a new thread is
 * started at once, so the next job finds it warm.
 */
export class ScriptThreads {
  private worker: Worker | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  /** Jobs run so far and threads started (the start cost: the first job of a thread loads the WebAssembly). */
  readonly stats = { jobs: 0, threads: 0, stopped: 0 };
  private closing = false;

  run(job: ScriptJob, host: HostCall, wallMs: number): Promise<ScriptResult> {
    const next = this.queue.then(() => this.runOne(job, host, wallMs));
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    this.closing = true;
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
        clearInterval(watch);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (kill && this.worker === worker) {
          this.worker = null;
          void worker.terminate();
          this.stats.stopped++;
          if (!this.closing) this.thread();
        }
        resolve(result);
      };
      const wallLimit = () => setTimeout(() => end({ ok: false, output: '', error: `time limit: the script did not finish within ${wallMs} ms`, cpuMs: 0 }, true), wallMs);
      // Restarted when the script starts: a new thread's warm-up (WebAssembly load) is not the script's time.
      let timer = wallLimit();
      let watch: NodeJS.Timeout | undefined;
      const startWatch = (tid: number | null, startCpuMs: number | null) => {
        if (startCpuMs === null) return;
        watch = setInterval(() => {
          const now = threadCpuMs(tid);
          if (now === null) return clearInterval(watch);
          const used = now - startCpuMs;
          if (used <= job.cpuMs + WATCH_GRACE_MS) return;
          const error = `time limit: the script ran for more than ${job.cpuMs} ms of CPU time (stopped in a long native operation at ${Math.round(used)} ms)`;
          end({ ok: false, output: '', error, cpuMs: Math.round(used * 100) / 100 }, true);
        }, WATCH_MS);
      };
      type Message = { type: string; call?: number; method?: string; args?: unknown[]; result?: ScriptResult; tid?: number | null; cpuMs?: number | null };
      const onMessage = (message: Message) => {
        if (message.type === 'done') return end(message.result!, false);
        if (message.type === 'started') {
          clearTimeout(timer);
          timer = wallLimit();
          return startWatch(message.tid ?? null, message.cpuMs ?? null);
        }
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
