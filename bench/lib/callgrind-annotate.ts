/**
 * Reads `callgrind_annotate --inclusive=yes` output for `bench/lib/callgrind.ts`: a segment's events in all
 * and inclusive in V8's optimizing compiler and its collector.
 */

/** Callgrind's events of a counted segment: the whole process's, and V8's optimizing compiler's and collector's within it (inclusive). */
export interface Segment {
  total: Record<string, number>;
  compiler: Record<string, number>;
  collector: Record<string, number>;
}

/**
 * The events of the PROGRAM TOTALS line and of the two V8 functions' lines (0 where a function did not run).
 * Each count is followed by its share in parentheses, `64,723,202 (100.0%)` or `2,089 ( 0.23%)`, a count
 * of 0 by none (`0` or `.`): the shares are dropped before the counts are matched to the header's events (with the cache
 * simulation's nine events, reading every other token as a count put stores in the first-level misses).
 */
export function readSegment(annotated: string): Segment {
  const lines = annotated.split('\n');
  const header = lines.find((l) => l.startsWith('Events shown:'));
  if (!header) throw new Error('callgrind_annotate: no "Events shown:" line');
  const events = header.slice('Events shown:'.length).trim().split(/\s+/);
  const read = (pattern: RegExp): Record<string, number> => {
    const line = lines.find((l) => pattern.test(l));
    const counts = line ? line.replace(/\([^)]*\)/g, ' ').trim().split(/\s+/).slice(0, events.length) : [];
    return Object.fromEntries(events.map((e, i) => [e, counts[i] === undefined || counts[i] === '.' ? 0 : Number(counts[i]!.replaceAll(',', ''))]));
  };
  return { total: read(/PROGRAM TOTALS/), compiler: read(/:v8::internal::Runtime_CompileOptimized\(/), collector: read(/:v8::internal::Heap::CollectGarbage\(/) };
}
