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
 * The rows to render (indexes, inclusive; empty when end < start) for the visible rows `first … last`
 * of `count`, scrolling down (`direction` 1) or up (−1).
 *
 * The library rendered 4 to 11 rows more on each side (windows aligned to batches of 8): 32–46 rows for
 * 24 visible. A fast scroll re-renders every rendered row each frame, so each row past the visible ones
 * costs script, layout and paint in every frame; rows ahead still cover what the compositor scrolls
 * into view before the next frame is rendered.
 */
export function overscanRows(first: number, last: number, count: number, direction: number): { start: number; end: number } {
  const before = direction < 0 ? OVERSCAN_AHEAD : OVERSCAN_BEHIND;
  const after = direction < 0 ? OVERSCAN_BEHIND : OVERSCAN_AHEAD;
  return { start: Math.max(0, first - before), end: Math.min(count - 1, last + after) };
}
