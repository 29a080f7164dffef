import { afterAll, describe, expect, it } from 'vitest';
import type { ScriptJob } from './script-sandbox.js';
import { ScriptThreads, WATCH_GRACE_MS } from './script-threads.js';
import { currentThreadId, threadCpuMs } from './thread-cpu.js';

const CPU_MS = 300;
const job = (code: string): ScriptJob => ({ code, row: { _id: 'r1', Name: 'x' }, cpuMs: CPU_MS, memoryBytes: 32 << 20, outputBytes: 4096 });
const noHost = () => Promise.resolve(null);
/** The wall-clock limit is far away (a minute): only the CPU limit may stop these scripts. */
const WALL_MS = 60_000;

/**
 * Scripts that spend their time inside long native operations, where QuickJS's interrupt handler is not
 * consulted (few bytecode steps between calls that each run long). Each must stop near the CPU limit.
 */
const HOSTILE: Record<string, string> = {
  'String.prototype.repeat': "const s = 'ab'.repeat(1 << 21); for (let i = 0; i < 100000; i++) s.repeat(4);",
  'Array.prototype.join': "const a = new Array(200000).fill('abcdefgh'); for (let i = 0; i < 100000; i++) a.join(',');",
  'Array.prototype.sort': 'const a = []; for (let i = 0; i < 200000; i++) a.push(String((i * 7919) % 200000)); for (let i = 0; i < 100000; i++) a.slice().sort();',
  'JSON of a big value': "const o = []; for (let i = 0; i < 30000; i++) o.push({ a: i, b: 'x'.repeat(20) }); for (let i = 0; i < 100000; i++) JSON.parse(JSON.stringify(o));",
  'a catastrophic regular expression': "for (let i = 0; i < 100000; i++) /^(a+)+$/.test('a'.repeat(32) + 'b');",
};

describe('thread CPU clock', () => {
  it("reads this thread's CPU time, which grows with work and not with waiting", async () => {
    const tid = currentThreadId();
    expect(tid).not.toBeNull();
    const before = threadCpuMs(tid)!;
    let x = 0;
    const until = threadCpuMs(tid)! + 50;
    while (threadCpuMs(tid)! < until) x += Math.sqrt(x + 1);
    const busy = threadCpuMs(tid)! - before;
    expect(busy).toBeGreaterThanOrEqual(50);
    const idleFrom = threadCpuMs(tid)!;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(threadCpuMs(tid)! - idleFrom).toBeLessThan(50);
    expect(threadCpuMs(999_999_999)).toBeNull();
  });
});

describe('run_script thread: the CPU limit holds inside long native operations', () => {
  const threads = new ScriptThreads();
  afterAll(() => threads.close());

  it.each(Object.entries(HOSTILE))('%s is stopped near the CPU limit with the reason; the next script runs', async (_name, code) => {
    const result = await threads.run(job(code), noHost, WALL_MS);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/^time limit: the script ran for more than 300 ms of CPU time/);
    // CPU time, not wall-clock time: the bound is the grace, a few watch intervals and the stop itself.
    expect(result.cpuMs).toBeGreaterThanOrEqual(CPU_MS * 0.9);
    expect(result.cpuMs).toBeLessThan(CPU_MS + WATCH_GRACE_MS + 250);
    const next = await threads.run(job("console.log('after', row.Name)"), noHost, WALL_MS);
    expect(next).toMatchObject({ ok: true, output: 'after x\n' });
    // Each stopped thread was replaced by one new thread.
    expect(threads.stats.threads).toBe(threads.stats.stopped + 1);
  });

  it('waiting for base calls uses no CPU time: a script that waits longer than its CPU limit finishes', async () => {
    const slowHost = () => new Promise((resolve) => setTimeout(() => resolve({ n: 1 }), 150));
    const result = await threads.run(job("for (let i = 0; i < 4; i++) await base.getRow('T', 'r'); console.log('waited');"), slowHost, WALL_MS);
    expect(result).toMatchObject({ ok: true, output: 'waited\n' });
  });
});
