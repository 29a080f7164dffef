/**
 * Which rows the grid renders around the visible ones, and when a scroll has ended (react-data-grid
 * is patched to use both at build time: web/patches/react-data-grid-row-slots.ts).
 */

/** Rows rendered beyond the visible ones in the direction of scrolling … */
export const OVERSCAN_AHEAD = 4;
/** … and on the other side. */
export const OVERSCAN_BEHIND = 1;

/** A scroll has ended when no scroll event came for this long: the rows' elements are then put in visual order. */
export const ROW_ORDER_SETTLE_MS = 150;

/**
 * How far (px) the next frame may scroll, from the last scroll event's move (`delta`) and the one before
 * it in the same direction (`previous`, 0 if none): a fling speeds up, so its growth is carried on, up to
 * twice the last move; a steady or slowing scroll is expected to move as far again.
 *
 * Why: the grid renders rows at the scroll event, which comes a frame after the browser moved the
 * scroll position (the compositor scrolls ahead of the page, more so on a loaded machine). The rows
 * rendered must reach that far, or the frame shows blank rows.
 */
export function scrollReach(delta: number, previous: number): number {
  const growth = previous > 0 ? Math.min(2, Math.max(1, delta / previous)) : 1;
  return delta * growth;
}

/**
 * The rows to render (indexes, inclusive; empty when end < start) for the visible rows `first … last`
 * of `count`, scrolling down (`direction` 1) or up (−1); `reach`: how many rows past the visible ones
 * the next frame may scroll into view (scrollReach, in rows).
 *
 * The library rendered 4 to 11 rows more on each side (windows aligned to batches of 8): 32–46 rows for
 * 24 visible. A fast scroll re-renders every rendered row each frame, so each row past the visible ones
 * costs script, layout and paint in every frame; rows ahead still cover what the compositor scrolls
 * into view before the next frame is rendered: OVERSCAN_AHEAD, or as many as a fling's next frame
 * reaches. A move of more than a screen a frame is a jump (a scrollbar drag, a row opened from a
 * link): no window could cover the next one, so it stays the smallest.
 */
export function overscanRows(first: number, last: number, count: number, direction: number, reach = 0): { start: number; end: number } {
  const ahead = reach > last - first + 1 ? OVERSCAN_AHEAD : Math.max(OVERSCAN_AHEAD, reach);
  const before = direction < 0 ? ahead : OVERSCAN_BEHIND;
  const after = direction < 0 ? OVERSCAN_BEHIND : ahead;
  return { start: Math.max(0, first - before), end: Math.min(count - 1, last + after) };
}
