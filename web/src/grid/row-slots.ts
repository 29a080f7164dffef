/**
 * Which rendered row element ("slot") shows which row of the grid: the React keys of the grid's rows
 * (react-data-grid is patched to use them at build time: web/patches/react-data-grid-row-slots.ts).
 */
export interface RowSlots {
  /** Row index → slot, for the rows of the rendered window. */
  readonly byRow: ReadonlyMap<number, number>;
  /** Slots ever handed out (0 … count − 1): at most the largest window rendered. */
  readonly count: number;
}

export const noRowSlots: RowSlots = { byRow: new Map(), count: 0 };

/**
 * The slots of the window `first … last` (row indexes, inclusive; empty when last < first):
 * - a row still in the window keeps its slot, so a short scroll leaves its element alone;
 * - a row coming into the window takes a slot a leaving row gave up (its element is re-rendered in
 *   place with the new row), then a slot unused in the last window, and a new slot only when none is
 *   free. A scroll of any length thus creates no row element once the window's size has been reached.
 */
export function assignRowSlots(previous: RowSlots, first: number, last: number): RowSlots {
  const byRow = new Map<number, number>();
  const taken = new Set<number>();
  for (let row = first; row <= last; row++) {
    const slot = previous.byRow.get(row);
    if (slot !== undefined) {
      byRow.set(row, slot);
      taken.add(slot);
    }
  }
  // Slots with an element to reuse (their rows left the window) first, then slots with none.
  const left = new Set([...previous.byRow.values()].filter((slot) => !taken.has(slot)).sort((a, b) => a - b));
  const unused: number[] = [];
  for (let slot = 0; slot < previous.count; slot++) if (!taken.has(slot) && !left.has(slot)) unused.push(slot);
  const free = [...left, ...unused];
  let next = 0;
  let count = previous.count;
  for (let row = first; row <= last; row++) {
    if (byRow.has(row)) continue;
    byRow.set(row, next < free.length ? free[next++]! : count++);
  }
  return { byRow, count };
}

/**
 * The order of the slots' elements in the DOM for the next render, given the committed order and the
 * slots of the rows to render (row index → slot):
 * - `visual` (the scroll has ended): by row, so the DOM order is the visual order (React moves the
 *   elements that are out of place; none is made anew);
 * - else the committed order, slots no longer rendered left out and new slots last: while scrolling,
 *   React moves no element (a moved element is restyled like a new one).
 */
export function slotOrder(committed: readonly number[], byRow: ReadonlyMap<number, number>, visual: boolean): number[] {
  if (visual) return [...byRow.entries()].sort((a, b) => a[0] - b[0]).map(([, slot]) => slot);
  const rendered = new Set(byRow.values());
  const order = committed.filter((slot) => rendered.has(slot));
  const placed = new Set(order);
  for (const slot of [...rendered].sort((a, b) => a - b)) if (!placed.has(slot)) order.push(slot);
  return order;
}
