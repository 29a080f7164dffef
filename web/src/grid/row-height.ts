import type { CSSProperties } from 'react';

/** The grid's one row height, in px: the grid's `rowHeight` and the `--row-height` set once on its root. */
export const ROW_HEIGHT = 34;

/**
 * Set on the grid's root: every row inherits it. react-data-grid wrote `style="top: …px; --row-height: 34px"`
 * on every row: an inline custom property next to a value that differs from row to row made Chromium
 * resolve each new row's style from scratch (about 0.75 ms a row on our 2-core machine, 30 ms a frame
 * when a fast scroll brought 40 new rows; `BENCH_TRACE=1 npm run bench:web`). The build-time patch of the
 * library (web/patches/react-data-grid-row-slots.ts) leaves `top` alone in a row's style.
 */
export const gridRowHeightStyle = { '--row-height': `${ROW_HEIGHT}px` } as CSSProperties;
