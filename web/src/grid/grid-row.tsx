import { forwardRef, memo, type CSSProperties, type ForwardedRef } from 'react';
import { Row as LibraryRow, type RowRendererProps } from 'react-data-grid';
import type { Row } from '../types';

/** The grid's one row height, in px: the grid's `rowHeight` and the `--row-height` set once on its root. */
export const ROW_HEIGHT = 34;

/** Set on the grid's root: every row inherits it instead of declaring it in its own inline style. */
export const gridRowHeightStyle = { '--row-height': `${ROW_HEIGHT}px` } as CSSProperties;

/**
 * react-data-grid's row, with only `top` in its inline style. The library writes
 * `style="top: …px; --row-height: 34px"` on every row: an inline custom property next to a value that
 * differs from row to row makes Chromium resolve each new row's style from scratch (about 0.75 ms a row
 * on our 2-core machine, 30 ms a frame when a fast scroll brings 40 new rows). Measured with
 * `BENCH_TRACE=1 npm run bench:web`. The library spreads its remaining props after its own `style`, so
 * ours replaces it; `RowRendererProps` leaves `style` out of its type, hence the cast.
 */
function GridRowWithRef(props: RowRendererProps<Row>, ref: ForwardedRef<HTMLDivElement>) {
  const style = { style: { top: props.top } };
  return <LibraryRow ref={ref} {...props} {...(style as object)} />;
}

export const GridRow = memo(forwardRef(GridRowWithRef));
