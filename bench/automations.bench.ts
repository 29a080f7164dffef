// The run_script action's start cost: a trivial script on the script thread (QuickJS runtime + context
// per run), against the same host round trip without QuickJS. `npx tsx bench/automations.bench.ts`
import { loadavg } from 'node:os';
import { ScriptThreads } from '../src/modules/automations/script-threads.js';

const RUNS = 300;
const threads = new ScriptThreads();
const job = (code: string) => ({ code, row: { _id: 'r1', Name: 'x' }, cpuMs: 1000, memoryBytes: 32 << 20, outputBytes: 65536 });
const host = async () => ({ ok: true });

const first = performance.now();
await threads.run(job(''), host, 30_000);
const firstMs = performance.now() - first;

async function measure(code: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await threads.run(job(code), host, 30_000);
    if (!r.ok) throw new Error(r.error);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b);
}
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))]!.toFixed(2);
const empty = await measure('');
const oneCall = await measure("await base.getRow('T', row._id); console.log(row.Name);");
await threads.close();
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.log(`first script (thread start + WebAssembly load): ${firstMs.toFixed(1)} ms`);
console.log(`empty script, ${RUNS} runs: median ${pct(empty, 0.5)} ms, p95 ${pct(empty, 0.95)} ms`);
console.log(`script with one base call + console.log: median ${pct(oneCall, 0.5)} ms, p95 ${pct(oneCall, 0.95)} ms`);
