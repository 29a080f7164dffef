/**
 * JSON body cost per MB (issue #24): the shape scan that runs before every JSON body is parsed
 * (`src/plugins/json-shape.ts`), against `JSON.parse` of the same text, in one run, medians of rounds:
 * ordinary row batches (accepted: scan + parse) and the attack body (one row of 1,000,000 keys:
 * refused by the scan alone; parsing it is what the server did before).
 *
 *   npx tsx bench/body-parse.bench.ts
 *
 * Knobs: BENCH_ROUNDS (5).
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_JSON_SHAPE, jsonShapeRefusal } from '../src/plugins/json-shape.js';
import { median } from './lib/harness.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const batch = (rows: number, columns: number) =>
  JSON.stringify({
    table_name: 'T',
    rows: Array.from({ length: rows }, (_, i) => Object.fromEntries(Array.from({ length: columns }, (_, c) => [`Column ${c}`, c % 2 ? i * c : `text ${i}: "quoted" \\ {x}`]))),
  });
const attack = `{"table_name":"T","rows":[{${Array.from({ length: 1_000_000 }, (_, i) => `"key${i}":1`).join(',')}}]}`;

const bodies: Array<[string, string]> = [
  ['1,000 rows x 10 columns', batch(1000, 10)],
  ['1,000 rows x 100 columns', batch(1000, 100)],
  ['one row of 1,000,000 keys (refused)', attack],
];

function msPerMb(text: string, work: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    work();
    times.push(performance.now() - t0);
  }
  return median(times) / (text.length / 1e6);
}

console.log(`JSON body cost, ms per MB (medians of ${ROUNDS} rounds)`);
console.log(`${'body'.padEnd(38)} ${'MB'.padStart(6)} ${'scan'.padStart(8)} ${'JSON.parse'.padStart(11)} ${'scan/parse'.padStart(11)}  verdict`);
for (const [label, text] of bodies) {
  const verdict = jsonShapeRefusal(text, DEFAULT_JSON_SHAPE);
  const scan = msPerMb(text, () => jsonShapeRefusal(text, DEFAULT_JSON_SHAPE));
  const parse = msPerMb(text, () => JSON.parse(text));
  console.log(
    `${label.padEnd(38)} ${(text.length / 1e6).toFixed(1).padStart(6)} ${scan.toFixed(1).padStart(8)} ${parse.toFixed(1).padStart(11)} ${(scan / parse).toFixed(2).padStart(10)}x  ${verdict ?? 'accepted'}`,
  );
}
