/**
 * Budgets of the web console, measured (not a test):
 *   1. first-load JavaScript: every script index.html loads, gzip- and brotli-compressed (budget 300 KB);
 *   2. grid scrolling over 100,000 rows in headless Chromium (budget: at least 50 frames per second).
 *      The baselines, measured in the same run: the same page's frame rate with the grid idle, and the
 *      same sweep over a trivial page (the ceiling: what the machine's load leaves of 60 fps), so the
 *      ratios say what scrolling costs on this machine, whatever its speed and load. The aim: 50 fps, or
 *      0.9 of the ceiling measured in the same round, in every round.
 *
 *   npm run bench:web            # BENCH_ROWS=100000 (needs /usr/bin/chromium and a built web/dist)
 *   BENCH_GC=1 npm run bench:web # a full garbage collection (CDP) before each measurement: shows how much
 *                                # of a frame's style time is the garbage left since the last one
 *   BENCH_TRACE=1 npm run bench:web # a Chromium trace of the sweep: style recalculations, the elements each
 *                                   # restyled, and what invalidated them (test-results/web-sweep-trace.json)
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { WEB_DIST } from '../src/plugins/web-console.js';
import type { Page } from 'playwright-core';
import { ADMIN, launchBrowser, signIn, startConsoleServer } from '../test/e2e/browser.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const BUDGET_KB = 300;
const SCROLL_MS = 5000;
/** Interleaved rounds of ceiling, wheel and sweep: on a loaded machine one round says little. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

function firstLoadJs(): { files: string[]; raw: number; gzip: number; brotli: number } {
  const html = readFileSync(path.join(WEB_DIST, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  let raw = 0, gzip = 0, brotli = 0;
  for (const file of files) {
    const bytes = readFileSync(path.join(WEB_DIST, file));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
    brotli += brotliCompressSync(bytes).length;
  }
  return { files, raw, gzip, brotli };
}

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

/** BENCH_PROFILE=1: the functions (and GC) with the most self time while the page scrolled. */
function printProfile(mode: string, profile: CpuProfile): void {
  const byNode = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const frame = byNode.get(id)!;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.split('/').pop() ?? ''}:${frame.lineNumber}`;
    self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
  console.log(`  profile (${mode}), self ms: ${top.map(([n, ms]) => `${n} ${ms.toFixed(0)}`).join(' | ')}`);
}

const TRACE_CATEGORIES = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'disabled-by-default-devtools.timeline.invalidationTracking'];

interface TraceEvent { name: string; ph: string; dur?: number; args?: { elementCount?: number; data?: Record<string, unknown>; beginData?: Record<string, unknown>; elementCount_?: number } }

/** BENCH_TRACE=1: the sweep's style recalculations (how many, how long, how many elements) and their causes. */
function printTrace(buffer: Buffer): void {
  mkdirSync(path.resolve('test-results'), { recursive: true });
  const file = path.resolve('test-results/web-sweep-trace.json');
  writeFileSync(file, buffer);
  const events = (JSON.parse(buffer.toString('utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
  const styles = events.filter((e) => e.name === 'UpdateLayoutTree' && e.ph === 'X');
  const elements = styles.map((e) => Number(e.args?.elementCount ?? 0));
  const ms = styles.reduce((sum, e) => sum + (e.dur ?? 0) / 1000, 0);
  const causes = new Map<string, number>();
  for (const e of events) {
    if (!e.name.includes('Invalidation')) continue;
    const d = e.args?.data ?? {};
    const key = `${e.name} ${String(d.reason ?? d.changedAttribute ?? d.changedClass ?? d.changedPseudo ?? '')} ${String(d.nodeName ?? '')}`.trim();
    causes.set(key, (causes.get(key) ?? 0) + 1);
  }
  const top = [...causes.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
  console.log(`  trace (sweep, ${file}): ${styles.length} style recalculations, ${ms.toFixed(0)} ms, elements restyled median ${median(elements)}, max ${Math.max(0, ...elements)}`);
  console.log(`  invalidations: ${top.map(([k, n]) => `${k} ×${n}`).join(' | ')}`);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function main(): Promise<void> {
  const js = firstLoadJs();
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log(`first-load JS (${js.files.length} file(s)): ${kb(js.raw)} raw, ${kb(js.gzip)} gzip, ${kb(js.brotli)} brotli — budget ${BUDGET_KB} KB compressed: ${js.gzip <= BUDGET_KB * 1024 ? 'within' : 'OVER'} (${((js.gzip / (BUDGET_KB * 1024)) * 100).toFixed(0)}% used)`);

  const { server, url } = await startConsoleServer({ RATE_LIMIT_ACCOUNT_PER_MINUTE: '0', RATE_LIMIT_BASE_PER_MINUTE: '0' });
  const browser = await launchBrowser();
  try {
    const login = await fetch(`${url}/api2/auth-token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ADMIN.email, password: ADMIN.password }) });
    const account = ((await login.json()) as { token: string }).token;
    const auth = { authorization: `Token ${account}`, 'content-type': 'application/json' };
    const created = await fetch(`${url}/api/v2.1/dtables/`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Bench' }) });
    const base = ((await created.json()) as { table: { workspace_id: number; uuid: string } }).table;
    const access = await fetch(`${url}/api/v2.1/workspace/${base.workspace_id}/dtable/Bench/access-token/`, { headers: auth });
    const baseToken = ((await access.json()) as { access_token: string }).access_token;
    const gw = { authorization: `Token ${baseToken}`, 'content-type': 'application/json' };
    await fetch(`${url}/api-gateway/api/v2/dtables/${base.uuid}/columns/`, { method: 'POST', headers: gw, body: JSON.stringify({ table_name: 'Table1', column_name: 'Amount', column_type: 'number' }) });
    const seedStart = Date.now();
    for (let start = 0; start < ROWS; start += 1000) {
      const rows = Array.from({ length: Math.min(1000, ROWS - start) }, (_, i) => ({ Name: `row ${start + i}`, Amount: start + i }));
      const res = await fetch(`${url}/api-gateway/api/v2/dtables/${base.uuid}/rows/`, { method: 'POST', headers: gw, body: JSON.stringify({ table_name: 'Table1', rows }) });
      if (!res.ok) throw new Error(`seeding failed: ${res.status} ${await res.text()}`);
    }
    console.log(`seeded ${ROWS} rows in ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);

    // A 1080-px window: the grid fills it (about 28 rows on screen), as on a person's desktop.
    const page = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
    // tsx keeps function names with a `__name` helper that evaluated functions would miss in the page.
    await page.addInitScript('window.__name = (f) => f');
    await signIn(page, url, ADMIN.email, ADMIN.password);
    const openStart = Date.now();
    await page.goto(`${url}/#/base/${base.workspace_id}/Bench`);
    await page.locator('.grid [role=row][aria-rowindex="2"]').waitFor({ timeout: 60_000 });
    const gridBox = (await page.getByRole('grid').boundingBox())!;
    console.log(`time to first rows (${ROWS} rows in the table, first page of 1,000): ${Date.now() - openStart} ms; grid ${Math.round(gridBox.height)} px tall in a 1080-px window`);
    // Load every page of rows the way a person would: by scrolling to the end until all are there.
    const loadStart = Date.now();
    await page.evaluate(async (expected) => {
      const grid = document.querySelector('.grid') as HTMLElement;
      const deadline = Date.now() + 180_000;
      // "N rows" without a "+": every page is there (a new base also has its few blank rows).
      const loaded = () => {
        const text = document.querySelector('.toolbar [role=status]')?.textContent ?? '';
        const m = /^(\d+) rows$/.exec(text);
        return m !== null && Number(m[1]) >= expected;
      };
      while (!loaded() && Date.now() < deadline) {
        grid.scrollTop = grid.scrollHeight;
        await new Promise((r) => setTimeout(r, 50));
      }
    }, ROWS);
    const loaded = await page.locator('.toolbar [role=status]').innerText();
    console.log(`grid loaded: ${loaded} in ${((Date.now() - loadStart) / 1000).toFixed(1)} s`);

    // Where the main thread's time goes while scrolling (Chromium's own counters, per frame).
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const counters = async () => {
      const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: Array<{ name: string; value: number }> };
      return Object.fromEntries(metrics.map((m) => [m.name, m.value]));
    };
    const gridDom = await page.evaluate(() => {
      const grid = document.querySelector('.grid')!;
      const rows = grid.querySelectorAll('[role=row]').length;
      return { elements: grid.querySelectorAll('*').length, rows };
    });
    console.log(`grid DOM: ${gridDom.elements} elements for ${gridDom.rows} rows (header included), ${(gridDom.elements / gridDom.rows).toFixed(1)} a row`);
    const profile = process.env.BENCH_PROFILE === '1';
    const trace = process.env.BENCH_TRACE === '1';
    const collect = process.env.BENCH_GC === '1';
    const measure = async (mode: 'idle' | 'wheel' | 'sweep') => {
      if (collect) await cdp.send('HeapProfiler.collectGarbage');
      if (profile) await cdp.send('Profiler.enable').then(() => cdp.send('Profiler.start'));
      if (trace && mode === 'sweep') await browser.startTracing(page, { categories: TRACE_CATEGORIES });
      const before = await counters();
      const result = await measureFrames(mode);
      const after = await counters();
      if (trace && mode === 'sweep') printTrace(await browser.stopTracing());
      if (profile) printProfile(mode, ((await cdp.send('Profiler.stop')) as { profile: CpuProfile }).profile);
      const perFrame = (name: string) => (((after[name] ?? 0) - (before[name] ?? 0)) * 1000) / Math.max(1, result.frames);
      return { ...result, script: perFrame('ScriptDuration'), layout: perFrame('LayoutDuration'), style: perFrame('RecalcStyleDuration'), task: perFrame('TaskDuration') };
    };
    const measureFrames = (mode: 'idle' | 'wheel' | 'sweep', on: Page = page) =>
      on.evaluate(
        async ({ mode, ms }) => {
          const grid = document.querySelector('.grid') as HTMLElement;
          grid.scrollTop = 0;
          const frames: number[] = [];
          const start = performance.now();
          let last = start;
          await new Promise<void>((resolve) => {
            const tick = (now: number) => {
              frames.push(now - last);
              last = now;
              // wheel: 120 px a frame, as a fast mouse wheel or flick; sweep: all rows top to bottom
              // and back within the measuring time (each frame jumps ~1,000 rows: every row element shows another row).
              if (mode === 'wheel') grid.scrollTop += 120;
              if (mode === 'sweep') {
                const phase = ((now - start) / ms) * 2;
                const f = phase <= 1 ? phase : 2 - phase;
                grid.scrollTop = f * (grid.scrollHeight - grid.clientHeight);
              }
              if (now - start < ms) requestAnimationFrame(tick);
              else resolve();
            };
            requestAnimationFrame(tick);
          });
          const sorted = [...frames.slice(1)].sort((a, b) => a - b);
          // "Never below 50 fps": the fewest frames shown in any one-second window of the run.
          const times: number[] = [];
          let t = 0;
          for (const d of frames.slice(1)) times.push((t += d));
          let minWindowFps = Number.POSITIVE_INFINITY;
          for (let i = 0, j = 0; i < times.length; i++) {
            if (times[i]! < 1000) continue;
            while (times[j]! <= times[i]! - 1000) j++;
            minWindowFps = Math.min(minWindowFps, i - j + 1);
          }
          return {
            frames: frames.length - 1,
            fps: (frames.length - 1) / ((last - start) / 1000),
            minWindowFps: Number.isFinite(minWindowFps) ? minWindowFps : (frames.length - 1) / ((last - start) / 1000),
            p95: sorted[Math.floor(sorted.length * 0.95)] ?? 0,
            worst: sorted[sorted.length - 1] ?? 0,
          };
        },
        { mode, ms: SCROLL_MS },
      );
    const idle = await measure('idle');
    const breakdown = (r: { script: number; style: number; layout: number; task: number }) =>
      `main thread per frame: ${r.task.toFixed(1)} ms (script ${r.script.toFixed(1)}, style ${r.style.toFixed(1)}, layout ${r.layout.toFixed(1)})`;
    console.log(`idle grid (baseline): ${idle.fps.toFixed(1)} fps, p95 frame ${idle.p95.toFixed(1)} ms; ${breakdown(idle)}`);
    // The ceiling: the same sweep over a trivial page (an empty scroller as tall as the grid), in the same
    // browser and rounds. What it misses of 60 fps is the machine's load, not the console's work.
    const trivial = await browser.newPage({ viewport: { width: 1920, height: 1080 } });
    await trivial.setContent(`<div class="grid" style="height:812px;overflow:auto"><div style="height:${(ROWS + 3) * 34}px"></div></div>`);
    await trivial.evaluate('window.__name = (f) => f'); // an init script does not run for setContent
    const fps: Record<'ceiling' | 'wheel' | 'sweep', number[]> = { ceiling: [], wheel: [], sweep: [] };
    /** Each round's frame rate as a share of that round's ceiling: what a loaded machine cannot hide. */
    const ofCeiling: Record<'wheel' | 'sweep', number[]> = { wheel: [], sweep: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      const ceiling = await measureFrames('sweep', trivial);
      fps.ceiling.push(ceiling.fps);
      console.log(`round ${round}: sweep over a trivial page (ceiling): ${ceiling.fps.toFixed(1)} fps, lowest in any 1 s ${ceiling.minWindowFps.toFixed(0)} fps, p95 frame ${ceiling.p95.toFixed(1)} ms`);
      for (const mode of ['wheel', 'sweep'] as const) {
        const r = await measure(mode);
        fps[mode].push(r.fps);
        ofCeiling[mode].push(r.fps / ceiling.fps);
        console.log(
          `round ${round}: ${mode} scrolling over ${ROWS} rows: ${r.fps.toFixed(1)} fps (ratio to idle ${(r.fps / idle.fps).toFixed(2)}, to the ceiling ${(r.fps / ceiling.fps).toFixed(2)}), lowest in any 1 s ${r.minWindowFps.toFixed(0)} fps, p95 frame ${r.p95.toFixed(1)} ms, worst ${r.worst.toFixed(1)} ms — budget 50 fps: ${r.fps >= 50 && r.minWindowFps >= 50 ? 'met' : 'NOT met'} (average and every 1 s window); ${breakdown(r)}`,
        );
      }
    }
    const range = (values: number[]) => `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)} fps`;
    console.log(`over ${ROUNDS} rounds: ceiling ${range(fps.ceiling)}, wheel ${range(fps.wheel)}, sweep ${range(fps.sweep)}`);
    // The aim: 50 fps, or (on a machine whose load leaves less than 60 fps) 0.9 of the ceiling, in every round.
    const ratios = (values: number[]) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
    for (const mode of ['wheel', 'sweep'] as const) {
      const held = fps[mode].filter((v, i) => v >= 50 || ofCeiling[mode][i]! >= 0.9).length;
      console.log(`${mode} / ceiling (same round): ${ratios(ofCeiling[mode])}; ≥ 50 fps or ≥ 0.9 of the ceiling in ${held} of ${ROUNDS} rounds: ${held === ROUNDS ? 'met' : 'NOT met'}`);
    }
  } finally {
    await browser.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
