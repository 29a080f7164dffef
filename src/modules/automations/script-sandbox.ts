import { getQuickJS, type QuickJSContext, type QuickJSHandle, type QuickJSRuntime, type QuickJSWASMModule } from 'quickjs-emscripten';
import { currentThreadId, threadCpuMs } from './thread-cpu.js';

/**
 * The `run_script` sandbox: QuickJS compiled to WebAssembly (quickjs-emscripten). The script sees
 * `row` (the triggering row as JSON), `base` (a client whose calls the host performs) and `console`;
 * nothing else — no fetch, require, import, timers, files or network. Limits: CPU time (interrupt handler,
 * confirmed by the thread's CPU clock; the script thread's watchdog covers long native calls), heap (runtime
 * memory limit), output size.
 */

export interface ScriptJob {
  code: string;
  /** The triggering row (null for a periodic run without rows). */
  row: unknown;
  cpuMs: number;
  memoryBytes: number;
  outputBytes: number;
}

export interface ScriptResult {
  ok: boolean;
  output: string;
  /** Why the script stopped: its own exception, or `time limit…`, `memory limit…`. */
  error?: string;
  cpuMs: number;
}

/** Performs one `base.*` call for the script; answers JSON-able data or throws. */
export type HostCall = (method: string, args: unknown[]) => Promise<unknown>;

export const SCRIPT_METHODS = ['getRow', 'listRows', 'updateRow', 'addRow'] as const;

// The client is built inside the VM from one host function, which the prelude then hides.
const PRELUDE = `(function (host) {
  const call = async (method, args) => { const text = await host(method, JSON.stringify(args)); return text === undefined ? undefined : JSON.parse(text); };
  const base = {};
  for (const m of ${JSON.stringify(SCRIPT_METHODS)}) base[m] = (...args) => call(m, args);
  globalThis.base = Object.freeze(base);
})(globalThis.__host); delete globalThis.__host;`;

const STACK_BYTES = 512 * 1024;

/** What the console and the host function of a prepared VM write to: the job running in it. */
interface Slot {
  write(line: string): void;
  host: HostCall;
  pending: Set<Promise<void>>;
  drain(): void;
  ended(): void;
}

/** A fresh runtime + context with console, host function and the prelude installed, not yet used by a script. */
interface Sandbox {
  runtime: QuickJSRuntime;
  vm: QuickJSContext;
  slot: Slot;
}

function prepare(QuickJS: QuickJSWASMModule): Sandbox {
  const runtime = QuickJS.newRuntime();
  runtime.setMaxStackSize(STACK_BYTES);
  const vm = runtime.newContext();
  const slot: Slot = { write: () => {}, host: () => Promise.reject(new Error('no script is running')), pending: new Set(), drain: () => {}, ended: () => {} };
  installConsole(vm, (line) => slot.write(line));
  installHost(vm, slot);
  vm.unwrapResult(vm.evalCode(PRELUDE)).dispose();
  return { runtime, vm, slot };
}

/**
 * One prepared sandbox kept ready per thread: it is made while the thread is idle after a script, so
 * the next script starts without building a runtime, a context and the prelude. Each script still gets
 * its own runtime and context, used once and freed (nothing of one script is seen by the next).
 */
let spare: Sandbox | null = null;

function takeSandbox(QuickJS: QuickJSWASMModule): Sandbox {
  const ready = spare;
  spare = null;
  return ready ?? prepare(QuickJS);
}

function prepareSpareWhenIdle(QuickJS: QuickJSWASMModule): void {
  setImmediate(() => {
    if (spare === null) spare = prepare(QuickJS);
  });
}

/** Loads the WebAssembly module and prepares the first sandbox, so a new thread's first script starts fast too. */
export async function warmUp(): Promise<void> {
  const QuickJS = await getQuickJS();
  if (spare === null) spare = prepare(QuickJS);
}

export async function runSandboxed(job: ScriptJob, host: HostCall): Promise<ScriptResult> {
  const QuickJS = await getQuickJS();
  const { runtime, vm, slot } = takeSandbox(QuickJS);
  runtime.setMemoryLimit(job.memoryBytes);
  let cpu = 0;
  let sliceStart: number | null = null;
  let stopped: string | undefined;
  // Time in the interpreter is counted on the wall clock (cheap); once that passes the limit, the thread's real
  // CPU clock decides (on a busy machine the wall clock runs far ahead of the CPU time the thread got).
  const tid = currentThreadId();
  const cpuAtStart = threadCpuMs(tid);
  let nextRealCheck = 0;
  const realCpu = () => (cpuAtStart === null ? null : (threadCpuMs(tid) ?? cpuAtStart) - cpuAtStart);
  runtime.setInterruptHandler(() => {
    if (stopped !== undefined) return true;
    if (sliceStart === null || cpu + (performance.now() - sliceStart) <= job.cpuMs) return false;
    const now = performance.now();
    if (now < nextRealCheck) return false;
    const real = realCpu();
    if (real === null || real > job.cpuMs) stopped = `time limit: the script ran for more than ${job.cpuMs} ms of CPU time`;
    else nextRealCheck = now + Math.min(5, job.cpuMs - real);
    return stopped !== undefined;
  });
  // Every entry into the interpreter is timed: waiting for host calls does not count.
  const slice = <T>(work: () => T): T => {
    sliceStart = performance.now();
    try {
      return work();
    } finally {
      cpu += performance.now() - sliceStart!;
      sliceStart = null;
    }
  };
  let output = '';
  let truncated = false;
  const pending = slot.pending;
  let isSettled = false;
  let idleCheck = () => {};
  // Nothing left to run and no host call in flight, yet not finished: an await that never settles.
  const idle = new Promise<null>((resolve) => {
    idleCheck = () => setImmediate(() => !isSettled && pending.size === 0 && resolve(null));
  });
  slot.write = (line) => {
    if (truncated) return;
    if (output.length + line.length + 1 > job.outputBytes) {
      output += `${line}\n`.slice(0, Math.max(0, job.outputBytes - output.length));
      output += '\n[output truncated]';
      truncated = true;
    } else output += `${line}\n`;
  };
  slot.host = host;
  slot.drain = () => slice(() => runtime.executePendingJobs());
  slot.ended = () => idleCheck();
  try {
    vm.unwrapResult(vm.evalCode(`globalThis.row = ${JSON.stringify(job.row ?? null)};`)).dispose();

    const evaluated = slice(() => vm.evalCode(`(async () => {\n${job.code}\n})()`, 'script.js'));
    if (evaluated.error) return finish(vm.dump(evaluated.error), evaluated.error);
    const promise = evaluated.value;
    const settled = vm.resolvePromise(promise).finally(() => {
      isSettled = true;
    });
    promise.dispose();
    slice(() => runtime.executePendingJobs());
    idleCheck();
    const result = await Promise.race([settled, idle]);
    if (result === null) return done(stopped ?? 'the script awaits something that never settles');
    if (result.error) return finish(vm.dump(result.error), result.error);
    result.value.dispose();
    return done();
  } catch (error) {
    return done(stopped ?? describe(error));
  } finally {
    // Host calls still running finish into a disposed VM: wait for them before freeing it.
    await Promise.allSettled(pending);
    vm.dispose();
    runtime.dispose();
    prepareSpareWhenIdle(QuickJS);
  }

  function finish(dumped: unknown, handle: QuickJSHandle): ScriptResult {
    handle.dispose();
    return done(stopped ?? describe(dumped));
  }
  function done(error?: string): ScriptResult {
    const memory = error !== undefined && /out of memory/i.test(error) ? `memory limit: the script needed more than ${Math.round(job.memoryBytes / 1048576)} MB` : undefined;
    const reason = memory ?? error;
    // The thread's CPU time since the start when it can be read (waiting for host calls uses none), else the interpreter's wall time.
    const used = realCpu() ?? cpu;
    return { ok: reason === undefined, output, ...(reason !== undefined ? { error: reason } : {}), cpuMs: Math.round(used * 100) / 100 };
  }
}

function describe(error: unknown): string {
  if (error && typeof error === 'object') {
    const e = error as { name?: unknown; message?: unknown };
    if (typeof e.message === 'string') return typeof e.name === 'string' && e.name !== 'Error' ? `${e.name}: ${e.message}` : e.message;
  }
  return String(error);
}

function installConsole(vm: QuickJSContext, write: (line: string) => void): void {
  const console = vm.newObject();
  for (const level of ['log', 'info', 'warn', 'error']) {
    const fn = vm.newFunction(level, (...args: QuickJSHandle[]) => {
      write(args.map((a) => (vm.typeof(a) === 'string' ? vm.getString(a) : safeJson(vm.dump(a)))).join(' '));
    });
    vm.setProp(console, level, fn);
    fn.dispose();
  }
  vm.setProp(vm.global, 'console', console);
  console.dispose();
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `__host(method, argsJson)` → a promise of the answer as JSON text, settled when the host call (`slot.host`) ends. */
function installHost(vm: QuickJSContext, slot: Slot): void {
  const fn = vm.newFunction('__host', (methodHandle, argsHandle) => {
    const method = vm.getString(methodHandle);
    const args = JSON.parse(vm.getString(argsHandle)) as unknown[];
    const deferred = vm.newPromise();
    const work = slot.host(method, args).then(
      (value) => {
        if (!vm.alive) return;
        const text = value === undefined ? vm.undefined : vm.newString(JSON.stringify(value));
        deferred.resolve(text);
        text.dispose();
      },
      (error: unknown) => {
        if (!vm.alive) return;
        const err = vm.newError(describe(error));
        deferred.reject(err);
        err.dispose();
      },
    );
    const tracked = work.then(() => {
      if (vm.alive) slot.drain();
    }).finally(() => {
      slot.pending.delete(tracked);
      slot.ended();
    });
    slot.pending.add(tracked);
    return deferred.handle;
  });
  vm.setProp(vm.global, '__host', fn);
  fn.dispose();
}
