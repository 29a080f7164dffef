/**
 * A small seeded generator (mulberry32) of numbers in [0, 1): the same seed gives the same sequence.
 * For whatever must repeat exactly from run to run: fuzz requests and random filters in tests (a failure
 * reproduces), a bench's bootstrap intervals. Not for secrets (`crypto.ts`).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
