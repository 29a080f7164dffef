import { parentPort } from 'node:worker_threads';
import { runSandboxed, type ScriptJob } from './script-sandbox.js';

/**
 * The code of the script thread (started by script-threads.ts; bundled as dist/script-thread.js): runs
 * one `run_script` job at a time in QuickJS; each `base.*` call goes to the main thread and back.
 */
type Incoming = { type: 'run'; job: ScriptJob } | { type: 'answer'; call: number; ok: boolean; value?: unknown; error?: string };

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
  runSandboxed(message.job, host).then(
    (result) => parentPort!.postMessage({ type: 'done', result }),
    (error: unknown) => parentPort!.postMessage({ type: 'done', result: { ok: false, output: '', error: String(error), cpuMs: 0 } }),
  );
});
