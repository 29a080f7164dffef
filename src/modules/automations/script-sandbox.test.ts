import { describe, expect, it } from 'vitest';
import { runSandboxed, type ScriptJob } from './script-sandbox.js';

const job = (code: string, extra: Partial<ScriptJob> = {}): ScriptJob => ({ code, row: { _id: 'r1', Name: 'x' }, cpuMs: 1000, memoryBytes: 32 << 20, outputBytes: 4096, ...extra });
const noHost = () => Promise.resolve(null);
/** Lets the thread's idle work (preparing the next sandbox) happen, as it does between two jobs. */
const idle = () => new Promise((resolve) => setImmediate(resolve));

describe('run_script sandbox: a prepared sandbox per script', () => {
  it('a script sees nothing a previous script left behind (globals, a replaced console or base, the row)', async () => {
    const first = await runSandboxed(
      job("globalThis.leak = 1; Object.prototype.polluted = true; console.log = () => {}; globalThis.base = null; row.Name = 'changed';"),
      noHost,
    );
    expect(first).toMatchObject({ ok: true });
    await idle();
    const second = await runSandboxed(
      job("console.log(typeof leak, typeof ({}).polluted, typeof base.getRow, row.Name);", { row: { _id: 'r2', Name: 'fresh' } }),
      noHost,
    );
    expect(second).toMatchObject({ ok: true, output: 'undefined undefined function fresh\n' });
  });

  it('the limits hold for a script started in a prepared sandbox: memory, then time, then a normal run', async () => {
    await idle();
    const memory = await runSandboxed(job('const a = []; while (true) a.push([1, 2, 3, 4, 5, 6, 7, 8]);', { memoryBytes: 8 << 20, cpuMs: 20_000 }), noHost);
    expect(memory.ok).toBe(false);
    expect(memory.error).toMatch(/^memory limit/);
    await idle();
    const time = await runSandboxed(job('for (;;) {}', { cpuMs: 50 }), noHost);
    expect(time.ok).toBe(false);
    expect(time.error).toMatch(/^time limit/);
    await idle();
    const calls: string[] = [];
    const after = await runSandboxed(job("const r = await base.getRow('T', row._id); console.log(r.n);"), (method) => {
      calls.push(method);
      return Promise.resolve({ n: 7 });
    });
    expect(after).toMatchObject({ ok: true, output: '7\n' });
    expect(calls).toEqual(['getRow']);
  });

  it('a script started before the spare is ready (back to back, no idle turn) runs in a sandbox of its own', async () => {
    const results = await Promise.all([runSandboxed(job('globalThis.a = 1; console.log(typeof b);'), noHost), runSandboxed(job('globalThis.b = 1; console.log(typeof a);'), noHost)]);
    expect(results.map((r) => r.output)).toEqual(['undefined\n', 'undefined\n']);
  });
});
