/**
 * Start cost of `basegate serve`: time from spawn to the first answered `GET /ping/`, the CPU time the
 * process tree had used by then (steadier than wall time on a loaded machine), and resident memory
 * (summed over the process tree) after 5 s idle. The compiled start (`node bin/basegate.js`,
 * what `npm start` runs) beside the previous `tsx src/cli.ts`, alternating, in one run.
 *   npx tsx bench/start.bench.ts [rounds=3]
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx tsx bench/start.bench.ts   # on PostgreSQL
 * Builds dist/ first when stale (not timed). Prints the verdict on issue 18's aims for the compiled
 * start: idle resident memory under 120 MB and the first answer under 2 s.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const ROOT = path.resolve(import.meta.dirname, '..');
const rounds = Number(process.argv[2] ?? 3);

const targets: Record<string, string[]> = {
  'compiled (node bin/basegate.js)': [process.execPath, 'bin/basegate.js', 'serve'],
  'tsx (tsx src/cli.ts, before)': [path.join(ROOT, 'node_modules/.bin/tsx'), 'src/cli.ts', 'serve'],
};

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** `pid` and all its descendants. */
function tree(pid: number): number[] {
  const all = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const found = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, pp] of all) if (found.has(pp) && !found.has(p)) (found.add(p), (grew = true));
  }
  return [...found];
}

/** CPU ms (user + system) used so far by `pid` and its descendants (Linux /proc; clock ticks of 10 ms). */
function treeCpuMs(pid: number): number {
  let ticks = 0;
  for (const p of tree(pid)) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      /* exited meanwhile */
    }
  }
  return ticks * 10;
}

/** RSS in MB of `pid` and all its descendants (Linux /proc). */
function treeRssMb(pid: number): { mb: number; processes: number } {
  const all = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,rss='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number) as [number, number, number]);
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, pp] of all) if (tree.has(pp) && !tree.has(p)) (tree.add(p), (grew = true));
  }
  const kb = all.filter(([p]) => tree.has(p)).reduce((sum, [, , rss]) => sum + rss, 0);
  return { mb: kb / 1024, processes: tree.size };
}

async function measure(command: string[]): Promise<{ firstAnswerMs: number; cpuMs: number; idleRssMb: number; processes: number }> {
  const port = await freePort();
  const env = { ...process.env, DATA_DIR: mkdtempSync(path.join(tmpdir(), 'basegate-start-bench-')), PORT: String(port), LOG_LEVEL: 'warn', ADMIN_PASSWORD: 'bench-password-1' };
  delete (env as NodeJS.ProcessEnv).DATABASE_URL;
  if (process.env.BENCH_DATABASE_URL) (env as NodeJS.ProcessEnv).DATABASE_URL = process.env.BENCH_DATABASE_URL;
  const started = performance.now();
  const child: ChildProcess = spawn(command[0]!, command.slice(1), { cwd: ROOT, env, stdio: 'ignore' });
  let firstAnswerMs = NaN;
  let cpuMs = NaN;
  for (let i = 0; i < 6000; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/ping/`);
      if (res.ok) {
        firstAnswerMs = performance.now() - started;
        cpuMs = treeCpuMs(child.pid!);
        break;
      }
    } catch {
      /* not yet listening */
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => setTimeout(r, 5000));
  const { mb, processes } = treeRssMb(child.pid!);
  const exited = new Promise((r) => child.on('close', r));
  child.kill('SIGTERM');
  await exited;
  return { firstAnswerMs, cpuMs, idleRssMb: mb, processes };
}

execFileSync(process.execPath, ['-e', "import('./scripts/build.mjs').then((m) => m.ensureBuilt())"], { cwd: ROOT, stdio: 'inherit' });
const results: Record<string, Array<Awaited<ReturnType<typeof measure>>>> = {};
for (let r = 0; r < rounds; r++) {
  for (const [name, command] of Object.entries(targets)) (results[name] ??= []).push(await measure(command));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const baseline = results['tsx (tsx src/cli.ts, before)']!;
const dialect = process.env.BENCH_DATABASE_URL ? 'postgres' : 'sqlite';
console.log(`${dialect}, node ${process.version}, ${rounds} rounds, medians; ${readFileSync('/proc/loadavg', 'utf8').trim()} (loadavg)`);
for (const [name, runs] of Object.entries(results)) {
  const first = median(runs.map((x) => x.firstAnswerMs));
  const rss = median(runs.map((x) => x.idleRssMb));
  const cpu = median(runs.map((x) => x.cpuMs));
  const ratioFirst = first / median(baseline.map((x) => x.firstAnswerMs));
  const ratioRss = rss / median(baseline.map((x) => x.idleRssMb));
  console.log(
    `${name.padEnd(34)} first answer ${first.toFixed(0).padStart(6)} ms (×${ratioFirst.toFixed(2)}, CPU ${cpu.toFixed(0)} ms)   idle RSS ${rss.toFixed(0).padStart(4)} MB (×${ratioRss.toFixed(2)}) in ${runs[0]!.processes} process(es)`,
  );
}
const compiled = results['compiled (node bin/basegate.js)']!;
const compiledFirst = median(compiled.map((x) => x.firstAnswerMs));
const compiledRss = median(compiled.map((x) => x.idleRssMb));
console.log(
  `aims (issue 18, compiled start on ${dialect}): idle RSS under 120 MB: ${compiledRss < 120 ? 'met' : 'missed'} (${compiledRss.toFixed(0)} MB); ` +
    `first answer under 2 s: ${compiledFirst < 2000 ? 'met' : 'missed'} (${compiledFirst.toFixed(0)} ms; wall time swings with the machine's load, see CPU)`,
);
