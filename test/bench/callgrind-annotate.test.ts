import { describe, expect, it } from 'vitest';
import { readSegment } from '../../bench/lib/callgrind-annotate.js';

// Lines of real `callgrind_annotate --inclusive=yes` output (valgrind 3.19), the cache simulation's nine events.
const CACHE_SIM = `Events shown:     Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
Event sort order: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
98,216,085 (100.0%) 32,601,443 (100.0%) 20,116,961 (100.0%) 1,164,907 (100.0%) 1,197,316 (100.0%) 340,699 (100.0%) 5,327 (100.0%) 1,588 (100.0%) 201,038 (100.0%)  PROGRAM TOTALS
   43,511,593 (44.30%)  13,035,218 (39.98%)   6,811,278 (33.86%)     75,816 ( 6.51%)    294,060 (24.56%)    95,823 (28.13%)  1,541 (28.93%)    217 (13.66%)    43,874 (21.82%)  ???:v8::internal::Runtime_CompileOptimized(int, unsigned long*, v8::internal::Isolate*) [/usr/bin/node]
    1,000 ( 0.00%)         .                  20 ( 0.00%)          0                  3 ( 0.00%)          .                  .              .                 .            ???:v8::internal::Heap::CollectGarbage(v8::internal::AllocationSpace, v8::internal::GarbageCollectionReason, v8::GCCallbackFlags) [/usr/bin/node]
`;

describe("the callgrind bench's reading of callgrind_annotate", () => {
  it('matches each count to its event, the shares in parentheses dropped (with or without a space inside)', () => {
    const segment = readSegment(CACHE_SIM);
    expect(segment.total).toEqual({ Ir: 98_216_085, Dr: 32_601_443, Dw: 20_116_961, I1mr: 1_164_907, D1mr: 1_197_316, D1mw: 340_699, ILmr: 5_327, DLmr: 1_588, DLmw: 201_038 });
    expect(segment.compiler).toEqual({ Ir: 43_511_593, Dr: 13_035_218, Dw: 6_811_278, I1mr: 75_816, D1mr: 294_060, D1mw: 95_823, ILmr: 1_541, DLmr: 217, DLmw: 43_874 });
  });

  it('reads `.` and `0` as no events', () => {
    expect(readSegment(CACHE_SIM).collector).toEqual({ Ir: 1_000, Dr: 0, Dw: 20, I1mr: 0, D1mr: 3, D1mw: 0, ILmr: 0, DLmr: 0, DLmw: 0 });
  });

  it('gives 0 for a function that did not run, and reads the instructions-only form', () => {
    const segment = readSegment('Events shown:     Ir\n64,723,202 (100.0%)  PROGRAM TOTALS\n');
    expect(segment.total).toEqual({ Ir: 64_723_202 });
    expect(segment.compiler).toEqual({ Ir: 0 });
    expect(segment.collector).toEqual({ Ir: 0 });
  });

  it('refuses output without its events header', () => {
    expect(() => readSegment('no such file')).toThrow(/Events shown/);
  });
});
