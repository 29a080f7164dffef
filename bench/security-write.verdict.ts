/**
 * Issue 33's verdict over several runs of the paired throughput bench: `npx tsx bench/security-write.verdict.ts
 * r1.json r2.json …`, each file a run's `BENCH_RAW` output (`BENCH_PAIRED=1 … security-write.throughput.ts`).
 * One run's interval covers its processes and rounds, not the host's state, which moved the ratio by more than
 * that from run to run (docs/security.md, round 9); so the runs are pooled here, resampled as runs and then as
 * processes within them (`pooledOverRuns`). Prints per case and arm, against the first arm (`off`): each run's
 * pooled ratio, and all runs together with their 95% interval; with a control arm (`off-b`), against it as well.
 */
import { readFileSync } from 'node:fs';
import { pooledOverRuns, mean } from './lib/ratios.js';

/** A run as `BENCH_RAW` writes it: per case, every server (an arm in a process) with its CPU per request per round. */
type RawRun = { case: string; servers: { arm: string; process: number; cpuPerRequest: number[] }[] }[];

/** Per process, that process's mean CPU per request in `arm` and in `base` (the same process serves both). */
function pairsOf(run: RawRun, name: string, arm: string, base: string): { mine: number; base: number }[] {
  const servers = run.find((c) => c.case === name)?.servers ?? [];
  const meanOf = (who: string, process: number) => {
    const server = servers.find((s) => s.arm === who && s.process === process);
    return server ? mean(server.cpuPerRequest) : undefined;
  };
  const processes = [...new Set(servers.map((s) => s.process))];
  return processes.flatMap((p) => {
    const [mine, theirs] = [meanOf(arm, p), meanOf(base, p)];
    return mine === undefined || theirs === undefined ? [] : [{ mine, base: theirs }];
  });
}

function main(files: string[]): void {
  if (files.length === 0) throw new Error('usage: security-write.verdict.ts <BENCH_RAW file>…');
  const runs = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as RawRun);
  const cases = [...new Set(runs.flatMap((run) => run.map((c) => c.case)))];
  console.log(`${runs.length} runs: ${files.join(', ')}`);
  for (const name of cases) {
    const arms = [...new Set(runs.flatMap((run) => (run.find((c) => c.case === name)?.servers ?? []).map((s) => s.arm)))];
    const [base, ...others] = arms;
    console.log(name === 'read' ? '100-row read, server CPU per request' : name === 'insert' ? 'single-row insert, server CPU per request' : name);
    for (const arm of others) printRatio(runs, name, arm, base!);
    // Against the control too: it is the same app as `off`, so it follows its own app in some turns where the
    // other arms follow another app (docs/security.md, round 10); the truth lies between the two ratios.
    if (arms.includes(CONTROL)) for (const arm of others) if (arm !== CONTROL) printRatio(runs, name, arm, CONTROL);
  }
}

const CONTROL = 'off-b';

function printRatio(runs: RawRun[], name: string, arm: string, base: string): void {
  const perRun = runs.map((run) => pairsOf(run, name, arm, base)).filter((pairs) => pairs.length > 0);
  if (perRun.length === 0) return;
  const each = perRun.map((pairs) => ((pairs.reduce((s, p) => s + p.mine, 0) / pairs.reduce((s, p) => s + p.base, 0)) * 100).toFixed(1));
  const all = pooledOverRuns(perRun);
  const processes = perRun.reduce((n, pairs) => n + pairs.length, 0);
  console.log(
    `  ${arm} ÷ ${base}: runs ${each.join(', ')}%; all ${perRun.length} runs (${processes} processes) pooled ${all.ratio.toFixed(1)}% (95% over runs and processes ${all.low.toFixed(1)}–${all.high.toFixed(1)}%)`,
  );
}

main(process.argv.slice(2));
