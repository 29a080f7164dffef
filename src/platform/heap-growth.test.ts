import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const MODULE = path.join(import.meta.dirname, 'heap-growth.ts');

/**
 * A process that keeps LIVE_MB and makes garbage that lives long enough to reach V8's old generation
 * (each chunk kept for 8 more), as a long export does; prints its live heap after a full collection and
 * the highest heap used after it. In a child: the flag is process-wide.
 */
const CHILD = `
import { getHeapStatistics } from 'node:v8';
const { setHeapGrowth } = await import(${JSON.stringify(MODULE)});
setHeapGrowth(Number(process.argv[1]));
const chunk = (tag, i) => Array.from({ length: 5000 }, (_, j) => tag + ' ' + i + ' ' + j + ' ' + 'x'.repeat(180));
const live = [];
for (let i = 0; i < 30; i++) live.push(chunk('live', i));
globalThis.gc();
const base = getHeapStatistics().used_heap_size;
let peak = 0;
let held = [];
for (let i = 0; i < 300; i++) {
  held.push(chunk('dead', i));
  if (held.length > 8) held = held.slice(1);
  await new Promise((r) => setImmediate(r));
  peak = Math.max(peak, getHeapStatistics().used_heap_size);
}
process.stdout.write(JSON.stringify({ base, peak, live: live.length }));
`;

function run(percent: number): { base: number; peak: number } {
  const child = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', CHILD, String(percent)], { encoding: 'utf8', timeout: 110_000 });
  if (child.status !== 0) throw new Error(child.stderr);
  return JSON.parse(child.stdout) as { base: number; peak: number };
}

describe('setHeapGrowth', () => {
  it('collects the old generation once it has grown the given percent past the live heap (V8 alone let it grow 4x)', () => {
    const { base, peak } = run(20);
    const MB = 2 ** 20;
    expect(base).toBeGreaterThan(40 * MB);
    // 20% past the live heap, plus what one incremental marking lets through and the young generation.
    expect(peak).toBeLessThan(base * 1.2 + 64 * MB);
  }, 120_000);
});
