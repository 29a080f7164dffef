/**
 * The order in which the paired benches' arms take turns (`security-write.throughput.ts`,
 * `security-write.arm-profile.ts`): a cycle of arm indexes in which every arm follows every other arm
 * exactly once, and never itself (an Eulerian circuit of the complete directed graph on `n` arms,
 * n·(n−1) turns). A turn seems to pay in part for what the turn before it left behind (the other app's
 * objects in the caches, the collector's debt); a rotation by one per turn let an `off` control follow its
 * own app in two turns of three while the scoped arm never did, and the control came out 1–3% off `off`
 * in every run (docs/security.md, round 10). In this cycle each arm has every predecessor alike.
 */
export function turnOrder(n: number): number[] {
  if (n <= 1) return n === 1 ? [0] : [];
  // Hierholzer's algorithm: the arcs not yet walked out of each arm, taken in ascending order.
  const unwalked = Array.from({ length: n }, (_, from) => Array.from({ length: n }, (_, to) => to).filter((to) => to !== from).reverse());
  const path = [0];
  const circuit: number[] = [];
  while (path.length > 0) {
    const at = path[path.length - 1]!;
    const to = unwalked[at]!.pop();
    if (to === undefined) circuit.push(path.pop()!);
    else path.push(to);
  }
  circuit.reverse();
  circuit.pop(); // a closed walk ends where it began: as a cycle, that arm is not repeated
  return circuit;
}
