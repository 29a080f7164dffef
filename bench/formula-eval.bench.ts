/**
 * Formula evaluation throughput, this checkout's engine (RE2JS regexes, simple ones over short texts on V8: functions/regex.ts; the per-evaluation work budget)
 * against the engine before issue #24, in one run, rounds interleaved (medians): ordinary formulas of
 * every kind over the same rows, in process (no HTTP, no database), then the attack formulas of the
 * issue, timed per row.
 *
 *   npx tsx bench/formula-eval.bench.ts
 *
 * The "before" engine is the formulas module (and src/shared) of git revision BENCH_BEFORE_REV (default 3bef854, the
 * branch point), extracted with `git archive` into a temporary directory. Knobs: BENCH_ROWS (20000),
 * BENCH_ROUNDS (7).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './lib/harness.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const BEFORE_REV = process.env.BENCH_BEFORE_REV ?? '3bef854';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

type Engine = {
  compileFormula(source: string, resolve: (name: string) => { key: string; type: string } | undefined): unknown;
  evaluate(formula: unknown, cell: (key: string) => unknown, ctx: { now: number; timeZone: string }): unknown;
};

/** Ordinary formulas: arithmetic, logic, text, dates, and regexes as people write them. */
const ORDINARY = [
  '{X} * 2 + 1',
  'round({X} / 3, 2)',
  'if({X} > 500, "big", "small")',
  'concatenate({Name}, " #", {X})',
  'left(upper({Name}), 3) & lower({Code})',
  'substitute({Name}, "row", "line")',
  'len({Name}) + find("o", {Name})',
  'dateAdd({Day}, {X}, "days")',
  'text({X}, "0.00")',
  'regexmatch({Code}, "^[A-Z]{2}-[0-9]+$")',
  'regexextract({Email}, "@([a-z.]+)")',
];

const ATTACKS = [
  ['regexmatch({Long}, "((a+))+$")', 'nested quantifiers on a 101-character cell'],
  ['regexmatch({Long}, "(a|a)+$")', 'alternation on a 101-character cell'],
  ['len(substitute(substitute(substitute(rept("ab", 50000), "a", "c"), "c", "a"), "a", "c"))', 'substitute chain over rept("ab", 50000)'],
] as const;

const TYPES: Record<string, string> = { X: 'number', Name: 'text', Code: 'text', Email: 'text', Day: 'date', Long: 'text' };

async function load(dir: string): Promise<Engine> {
  return (await import(pathToFileURL(path.join(dir, 'src/modules/formulas/index.ts')).href)) as Engine;
}

function compileAll(engine: Engine, sources: readonly string[]) {
  return sources.map((s) => engine.compileFormula(s, (name) => (TYPES[name] ? { key: name, type: TYPES[name]! } : undefined)));
}

function rows() {
  return Array.from({ length: ROWS }, (_, i) => ({
    X: i,
    Name: `row ${i}`,
    Code: `${i % 2 ? 'AB' : 'xy'}-${i}`,
    Email: `user${i}@example.org`,
    Day: '2024-02-29',
    Long: `${'a'.repeat(100)}!`,
  })) as Array<Record<string, unknown>>;
}

/** Milliseconds to evaluate every formula over every row. */
function pass(engine: Engine, compiled: unknown[], data: Array<Record<string, unknown>>): number {
  const ctx = { now: Date.UTC(2024, 0, 31), timeZone: 'UTC' };
  const t0 = performance.now();
  for (const row of data) for (const f of compiled) engine.evaluate(f, (key) => row[key] ?? null, ctx);
  return performance.now() - t0;
}

async function main() {
  const beforeDir = mkdtempSync(path.join(tmpdir(), 'basegate-formulas-before-'));
  const archive = execFileSync('git', ['-C', root, 'archive', BEFORE_REV, 'src/modules/formulas', 'src/shared'], { maxBuffer: 64 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', beforeDir], { input: archive });
  const engines = { before: await load(beforeDir), after: await load(root) };
  const data = rows();
  const compiled = { before: compileAll(engines.before, ORDINARY), after: compileAll(engines.after, ORDINARY) };
  console.log(`formula evaluation — ${ORDINARY.length} ordinary formulas x ${ROWS.toLocaleString('en')} rows, ${ROUNDS} rounds (medians); before = ${BEFORE_REV}`);
  const times = { before: [] as number[], after: [] as number[] };
  pass(engines.before, compiled.before, data.slice(0, 2000));
  pass(engines.after, compiled.after, data.slice(0, 2000));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const);
    for (const name of order) times[name].push(pass(engines[name], compiled[name], data));
  }
  const evaluations = ORDINARY.length * ROWS;
  const rate = (ms: number) => ((evaluations / ms) * 1000).toFixed(0);
  const [b, a] = [median(times.before), median(times.after)];
  console.log(`before  ${b.toFixed(1).padStart(8)} ms  ${rate(b).padStart(10)} evaluations/s`);
  console.log(`after   ${a.toFixed(1).padStart(8)} ms  ${rate(a).padStart(10)} evaluations/s   after/before time ${(a / b).toFixed(2)}x`);

  console.log('\nper formula, after/before time (medians of 3 passes each):');
  for (let i = 0; i < ORDINARY.length; i++) {
    const per = (name: 'before' | 'after') => median([0, 1, 2].map(() => pass(engines[name], [compiled[name][i]], data)));
    const [pb, pa] = [per('before'), per('after')];
    console.log(`  ${ORDINARY[i]!.padEnd(45)} ${(pa / pb).toFixed(2)}x  (${pb.toFixed(1)} → ${pa.toFixed(1)} ms)`);
  }

  // The regex attacks backtrack exponentially before: timed there on 22 characters, not 101 (that took minutes).
  console.log('\nattack formulas, ms per row (median of 5 rows)');
  for (const [source, label] of ATTACKS) {
    const cells: string[] = [];
    for (const name of ['before', 'after'] as const) {
      const [f] = compileAll(engines[name], [source]);
      const short = name === 'before' && source.includes('{Long}');
      const row = short ? [{ ...data[0]!, Long: `${'a'.repeat(21)}!` }] : data.slice(0, 1);
      const per = [0, 1, 2, 3, 4].map(() => pass(engines[name], [f], row));
      cells.push(`${name}${short ? ' (22 chars)' : ''} ${median(per).toFixed(2)} ms`);
    }
    console.log(`  ${label.padEnd(45)} ${cells.join('   ')}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
