import { describe, expect, it } from 'vitest';
import { OVERSCAN_AHEAD, OVERSCAN_BEHIND, overscanRows, scrollReach } from '../../web/src/grid/row-window.js';
import { assignRowSlots, noRowSlots, slotOrder } from '../../web/src/grid/row-slots.js';

describe('row window: the rows the grid renders around the visible ones', () => {
  it('renders more rows ahead in the direction of scrolling than behind', () => {
    expect(overscanRows(100, 123, 1000, 1)).toEqual({ start: 100 - OVERSCAN_BEHIND, end: 123 + OVERSCAN_AHEAD });
    expect(overscanRows(100, 123, 1000, -1)).toEqual({ start: 100 - OVERSCAN_AHEAD, end: 123 + OVERSCAN_BEHIND });
    expect(OVERSCAN_AHEAD).toBeGreaterThan(OVERSCAN_BEHIND);
  });

  it('reaches as far ahead as a fling\'s next frame may scroll, up to a screen; a jump gets the smallest window', () => {
    expect(overscanRows(100, 123, 1000, 1, 2)).toEqual({ start: 100 - OVERSCAN_BEHIND, end: 123 + OVERSCAN_AHEAD });
    expect(overscanRows(100, 123, 1000, 1, 15)).toEqual({ start: 100 - OVERSCAN_BEHIND, end: 123 + 15 });
    expect(overscanRows(100, 123, 1000, -1, 15)).toEqual({ start: 100 - 15, end: 123 + OVERSCAN_BEHIND });
    expect(overscanRows(100, 123, 1000, 1, 24)).toEqual({ start: 99, end: 123 + 24 });
    expect(overscanRows(100, 123, 1000, 1, 25)).toEqual({ start: 99, end: 123 + OVERSCAN_AHEAD });
  });

  it('expects a scroll to move as far again, a speeding fling further (up to twice)', () => {
    expect(scrollReach(120, 120)).toBe(120);
    expect(scrollReach(120, 0)).toBe(120);
    expect(scrollReach(100, 200)).toBe(100);
    expect(scrollReach(300, 200)).toBe(450);
    expect(scrollReach(300, 50)).toBe(600);
  });

  it('stays inside the table, and is empty without rows', () => {
    expect(overscanRows(0, 23, 30, -1)).toEqual({ start: 0, end: 24 });
    expect(overscanRows(10, 29, 30, 1)).toEqual({ start: 9, end: 29 });
    const none = overscanRows(0, -1, 0, 1);
    expect(none.end).toBeLessThan(none.start);
  });
});

describe('slot order: the DOM order of the rows\' elements', () => {
  it('while scrolling keeps the committed order, so React moves no element; new slots go last', () => {
    const first = assignRowSlots(noRowSlots, 0, 9);
    const order = slotOrder([], first.byRow, false);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Four rows down: rows 0–3 leave and rows 10–13 take their slots (first in the DOM); a row more needs a new slot.
    const next = assignRowSlots(first, 4, 14);
    const scrolling = slotOrder(order, next.byRow, false);
    expect(scrolling).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // The DOM order is then not the visual order: rows 10–13 come first.
    expect(scrolling.map((slot) => [...next.byRow].find(([, s]) => s === slot)![0])).toEqual([10, 11, 12, 13, 4, 5, 6, 7, 8, 9, 14]);
  });

  it('once settled is the visual order, made of the same slots', () => {
    const first = assignRowSlots(noRowSlots, 0, 9);
    const next = assignRowSlots(first, 4, 13);
    const visual = slotOrder([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], next.byRow, true);
    expect(visual).toEqual([4, 5, 6, 7, 8, 9, 0, 1, 2, 3]);
    expect(new Set(visual)).toEqual(new Set(next.byRow.values()));
    // Scrolling on from there keeps that order.
    const later = assignRowSlots(next, 5, 14);
    expect(slotOrder(visual, later.byRow, false)).toEqual(visual);
  });

  it('leaves out slots no longer rendered', () => {
    const first = assignRowSlots(noRowSlots, 0, 9);
    const shrunk = assignRowSlots(first, 0, 4);
    expect(slotOrder([9, 8, 7, 6, 5, 4, 3, 2, 1, 0], shrunk.byRow, false)).toEqual([4, 3, 2, 1, 0]);
  });
});
