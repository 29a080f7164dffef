import { parentPort } from 'node:worker_threads';
import { runSandboxed, warmUp, type ScriptJob } from './script-sandbox.js';
import { currentThreadId, threadCpuMs } from './thread-cpu.js';

/**
 * The code of the script thread (started by script-threads.ts; bundled as dist/script-thread.js): runs
 * one `run_script` job at a time in QuickJS; each `base.*` call goes to the main thread and back.
 * When a job starts it tells the main thread its thread id and CPU time so far: the main thread then
 * watches this thread's CPU time and stops it at the limit (a long native call is not interruptible here).
 */
type Incoming = { type: 'run'; job: ScriptJob } | { type: 'answer'; call: number; ok: boolean; value?: unknown; error?: string };

const tid = currentThreadId();
const ready = warmUp().catch(() => undefined);
let nextCall = 0;
const calls = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();

parentPort?.on('message', (message: Incoming) => {
  if (message.type === 'answer') {
    const call = calls.get(message.call);
    calls.delete(message.call);
    if (message.ok) call?.resolve(message.value);
    else call?.reject(new Error(message.error ?? 'failed'));
    return;
  }
  const host = (method: string, args: unknown[]) =>
    new Promise<unknown>((resolve, reject) => {
      const call = ++nextCall;
      calls.set(call, { resolve, reject });
      parentPort!.postMessage({ type: 'call', call, method, args });
    });
  const job = message.job;
  // After the warm-up (a new thread's WebAssembly load is not the script's CPU time).
  ready
    .then(() => {
      parentPort!.postMessage({ type: 'started', tid, cpuMs: threadCpuMs(tid) });
      return runSandboxed(job, host);
    })
    .then(
      (result) => parentPort!.postMessage({ type: 'done', result }),
      (error: unknown) => parentPort!.postMessage({ type: 'done', result: { ok: false, output: '', error: String(error), cpuMs: 0 } }),
    );
});

