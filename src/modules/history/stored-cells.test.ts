import { describe, expect, it } from 'vitest';
import { planRanges } from './stored-cells.js';

/** Row ids `${name}0…` of an append of `n` rows, and their stored ids from `first` by `step`. */
function append(name: string, n: number, first: number, step = 1): { ids: string[]; ends: Array<[string, number]> } {
  const ids = Array.from({ length: n }, (_, i) => `${name}${i}`);
  return { ids, ends: [[ids[0]!, first], [ids[n - 1]!, first + (n - 1) * step]] };
}

describe('planRanges', () => {
  it('reads consecutive appends as one range', () => {
    const a = append('a', 10, 1);
    const b = append('b', 10, 11);
    expect(planRanges([a.ids, b.ids], new Map([...a.ends, ...b.ends]))).toEqual([{ lo: 1, hi: 20, rows: 20 }]);
  });

  it('reads three writers’ interleaved appends together (each alone is too sparse)', () => {
    const apps = ['a', 'b', 'c'].map((name, i) => append(name, 10, 1 + i, 3));
    expect(planRanges(apps.map((x) => x.ids), new Map(apps.flatMap((x) => x.ends)))).toEqual([{ lo: 1, hi: 30, rows: 30 }]);
  });

  it('leaves out an append whose last row lies far away, keeping the rest as ranges', () => {
    const a = append('a', 10, 1);
    const b = append('b', 10, 11);
    const far: Array<[string, number]> = [[b.ids[0]!, 11], [b.ids[9]!, 5000]];
    const c = append('c', 10, 21);
    expect(planRanges([a.ids, b.ids, c.ids], new Map([...a.ends, ...far, ...c.ends]))).toEqual([
      { lo: 1, hi: 10, rows: 10 },
      { lo: 21, hi: 30, rows: 10 },
    ]);
  });

  it('guesses a missing end from the append’s length, and skips an append with neither', () => {
    const a = append('a', 10, 100);
    const b = append('b', 5, 200);
    expect(planRanges([a.ids, b.ids], new Map([[a.ids[9]!, 109]]))).toEqual([{ lo: 100, hi: 109, rows: 10 }]);
  });
});
