import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets its old generation grow past what its last full collection kept before collecting it
 * again (HEAP_GROWING_PERCENT). V8's own factor grows with the machine's load (1.1× to 4×): a server that
 * keeps 60 MB let 190 MB of dead pages and rows pile up in a long export before one collection (issue 34.3,
 * bench/read-memory.bench.ts). 0 leaves V8's factor. Process-wide (the server's threads too); set by the
 * `serve` command only, before the server starts, so tests and other commands keep V8's defaults.
 */
export function setHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
