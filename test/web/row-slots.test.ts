import { describe, expect, it } from 'vitest';
import { assignRowSlots, noRowSlots, type RowSlots } from '../../web/src/grid/row-slots.js';

/** The slots of a window, as [row, slot] pairs in row order. */
const pairs = (slots: RowSlots) => [...slots.byRow.entries()].sort((a, b) => a[0] - b[0]);
const slotSet = (slots: RowSlots) => new Set(slots.byRow.values());

describe('row slots: the grid keys its row elements by slot so that scrolling reuses them', () => {
  it('numbers the first window 0 … n − 1', () => {
    const first = assignRowSlots(noRowSlots, 0, 4);
    expect(pairs(first)).toEqual([[0, 0], [1, 1], [2, 2], [3, 3], [4, 4]]);
    expect(first.count).toBe(5);
  });

  it('keeps the slots of rows still in the window and gives the leaving rows\' slots to the entering ones', () => {
    const before = assignRowSlots(noRowSlots, 0, 9);
    const after = assignRowSlots(before, 4, 13);
    for (let row = 4; row <= 9; row++) expect(after.byRow.get(row)).toBe(before.byRow.get(row));
    // Rows 10–13 take the slots rows 0–3 gave up; no slot is added.
    expect([10, 11, 12, 13].map((row) => after.byRow.get(row))).toEqual([0, 1, 2, 3]);
    expect(after.count).toBe(10);
  });

  it('a jump far away reuses every slot: no new element however far the scroll goes', () => {
    let slots = assignRowSlots(noRowSlots, 0, 35);
    for (const start of [1_000, 50_000, 99_964, 8, 40_000]) {
      slots = assignRowSlots(slots, start, start + 35);
      expect(slotSet(slots)).toEqual(new Set(Array.from({ length: 36 }, (_, i) => i)));
      expect(slots.count).toBe(36);
    }
  });

  it('a window that varies in size (batches of 8) never needs more slots than its largest size', () => {
    let slots = noRowSlots;
    let largest = 0;
    for (let top = 0; top < 3_000; top += 37) {
      const first = Math.max(0, Math.floor((top - 4) / 8) * 8);
      const last = Math.ceil((top + 27 + 4) / 8) * 8;
      largest = Math.max(largest, last - first + 1);
      slots = assignRowSlots(slots, first, last);
      expect(slotSet(slots).size).toBe(last - first + 1); // one slot a row: React keys stay unique
      expect(slots.count).toBeLessThanOrEqual(largest);
    }
  });

  it('a shrunk window keeps its rows\' slots, and growing again takes the unused slots before new ones', () => {
    const full = assignRowSlots(noRowSlots, 0, 9);
    const shrunk = assignRowSlots(full, 0, 2);
    expect(pairs(shrunk)).toEqual([[0, 0], [1, 1], [2, 2]]);
    const grown = assignRowSlots(shrunk, 0, 11);
    expect(slotSet(grown)).toEqual(new Set(Array.from({ length: 12 }, (_, i) => i)));
    expect(grown.count).toBe(12);
  });

  it('an empty window (no rows) has no slots and forgets none of the count', () => {
    const some = assignRowSlots(noRowSlots, 0, 5);
    const none = assignRowSlots(some, 0, -1);
    expect(none.byRow.size).toBe(0);
    expect(none.count).toBe(6);
  });
});
