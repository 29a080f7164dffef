import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';

/**
 * Build-time patch of react-data-grid 7.0.0-canary.49 (MIT, © 2014 Prometheus Research, © 2015 Adazzle;
 * node_modules/react-data-grid/LICENSE): its rows are keyed by slot, so scrolling reuses row elements.
 *
 * Why: the library keys each row element by `rowKeyGetter(row)` (or its index). A fast scroll then
 * replaces every row element in a frame, and Chromium's style recalculation of ~200 new elements a
 * frame held a 100,000-row sweep at 28–39 fps (docs/console.md, "Scrolling performance"). Keyed by
 * slot (web/src/grid/row-slots.ts), a row that leaves the window hands its element to a row that
 * enters it, and while scrolling the elements keep their places in the DOM so React never moves one (a
 * moved element is restyled like a new one). Rows are placed by their `top` and carry `aria-rowindex`;
 * the DOM order is not the visual order while scrolling, and ROW_ORDER_SETTLE_MS after the last scroll
 * event the elements are put in visual order (moved, not made anew). Reuse alone restyled as much
 * (the library's CSS made a reused row restyle whole): the CSS edits below make it restyle the row
 * element alone. Both together: style ~0.5 ms a frame instead of 70–190 ms on the loaded bench machine.
 *
 * What stays as it was: `rowKeyGetter` still names rows for selection (`selectedRows`), the selected
 * cell is still a position (`selectedPosition`), editors still close when their row leaves the window.
 * One thing reuse would change is fixed here: an element that now shows another row could keep the
 * keyboard focus of the row it showed (a row checkbox, a group header's button), and Space would then
 * tick the other row. It loses the focus instead, as the removed element did before. (Not to the grid's
 * focus sink: focusing it scrolls back to the selected cell.)
 *
 * Less per frame of a fast scroll (each frame re-renders every rendered row): the rows rendered are the
 * visible ones, 4 ahead (more in a fling: as far as its next frame may scroll) and 1 behind
 * (web/src/grid/row-window.ts; the library rendered 4–11 more on each side), a row's style is its `top`
 * alone, a cell renders its formatter without a fragment around it, and the library's latest-callback
 * refs are set in the commit rather than in a passive effect.
 *
 * The patch is applied to the library's module by Vite (build and dev server); no file in
 * node_modules is changed. Every edit must match exactly once, or the build fails: a new version of the
 * library needs the patch redone.
 */
const LIBRARY = /[\\/]node_modules[\\/]react-data-grid[\\/]lib[\\/]bundle\.js$/;
/** Our modules the patched library imports, by the ids it imports them with. */
const MODULES: Record<string, string> = {
  'basegate:row-slots': fileURLToPath(new URL('../src/grid/row-slots.ts', import.meta.url)),
  'basegate:row-window': fileURLToPath(new URL('../src/grid/row-window.ts', import.meta.url)),
};

interface Edit {
  find: string;
  replace: string;
}

const EDITS: Edit[] = [
  // CSS. A reused row gets a new `top`, which must restyle the row alone. The library gives every
  // element `box-sizing: inherit` and every cell `background-color: inherit`: a child that copies a
  // value its parent does not pass on by itself is restyled with its parent, whatever changed there, so
  // each reused row was restyled whole (5 elements; ~1 ms a row on a loaded 2-core machine). The same
  // values without `inherit`: border-box (the grid's root is), and the row's background passed in a
  // custom property, inherited as usual, which changes (and restyles the cells) only on hover and
  // selection. Selectors and their order are the library's.
  { find: '{box-sizing:inherit}', replace: '{box-sizing:border-box}' },
  { find: 'background-color:inherit;', replace: 'background-color:var(--row-background);' },
  {
    find: 'line-height:var(--row-height);background-color:var(--background-color)}',
    replace: 'line-height:var(--row-height);--row-background:var(--background-color);background-color:var(--row-background)}',
  },
  { find: ':hover{background-color:var(--row-hover-background-color)}', replace: ':hover{--row-background:var(--row-hover-background-color)}' },
  { find: '[aria-selected=true]{background-color:var(--row-selected-background-color)}', replace: '[aria-selected=true]{--row-background:var(--row-selected-background-color)}' },
  {
    find: '[aria-selected=true]:hover{background-color:var(--row-selected-hover-background-color)}',
    replace: '[aria-selected=true]:hover{--row-background:var(--row-selected-hover-background-color)}',
  },
  // The header row's cells (frozen ones cover the others when scrolled sideways) and group rows.
  { find: 'background-color:var(--header-background-color);', replace: '--row-background:var(--header-background-color);background-color:var(--row-background);' },
  { find: ':not([aria-selected=true]){background-color:var(--header-background-color)}', replace: ':not([aria-selected=true]){--row-background:var(--header-background-color)}' },
  {
    find: `import { createPortal } from 'react-dom';\n`,
    replace:
      `import { createPortal } from 'react-dom';\n` +
      `import { assignRowSlots, noRowSlots, slotOrder } from 'basegate:row-slots';\n` +
      `import { overscanRows, ROW_ORDER_SETTLE_MS, scrollReach } from 'basegate:row-window';\n`,
  },
  {
    // The library's callbacks read the latest props through a ref set in a passive effect after every
    // render: a scroll then scheduled one more task per frame to flush it. Set during the commit instead.
    find: `function useLatestFunc(fn) {\n  const ref = useRef(fn);\n  useEffect(() => {\n    ref.current = fn;\n  });\n`,
    replace: `function useLatestFunc(fn) {\n  const ref = useRef(fn);\n  useLayoutEffect(() => {\n    ref.current = fn;\n  });\n`,
  },
  {
    // The rows rendered around the visible ones: a few ahead in the direction of scrolling, one behind,
    // instead of 4–11 on each side (web/src/grid/row-window.ts).
    find: `  clientHeight,\n  scrollTop,\n  groupBy,\n`,
    replace: `  clientHeight,\n  scrollTop,\n  scrollDirection,\n  scrollReach,\n  groupBy,\n`,
  },
  {
    find:
      `  const overscanThreshold = 4;\n  const rowVisibleStartIdx = findRowIdx(scrollTop);\n  const rowVisibleEndIdx = min(rows.length - 1, findRowIdx(scrollTop + clientHeight));\n` +
      `  const rowOverscanStartIdx = max(0, floor((rowVisibleStartIdx - overscanThreshold) / RENDER_BATCH_SIZE) * RENDER_BATCH_SIZE);\n` +
      `  const rowOverscanEndIdx = min(rows.length - 1, ceil((rowVisibleEndIdx + overscanThreshold) / RENDER_BATCH_SIZE) * RENDER_BATCH_SIZE);\n`,
    replace:
      `  const rowVisibleStartIdx = findRowIdx(scrollTop);\n  const rowVisibleEndIdx = min(rows.length - 1, findRowIdx(scrollTop + clientHeight));\n` +
      // How many rows past the visible ones the next frame may bring into view (a fling's reach, px).
      `  const reachRows = scrollDirection < 0 ? rowVisibleStartIdx - findRowIdx(max(0, scrollTop - scrollReach)) : findRowIdx(scrollTop + clientHeight + scrollReach) - findRowIdx(scrollTop + clientHeight);\n` +
      `  const {\n    start: rowOverscanStartIdx,\n    end: rowOverscanEndIdx\n  } = overscanRows(rowVisibleStartIdx, rowVisibleEndIdx, rows.length, scrollDirection, reachRows);\n`,
  },
  {
    find: `    clientHeight,\n    scrollTop,\n    expandedGroupIds,\n`,
    replace: `    clientHeight,\n    scrollTop,\n    scrollDirection: rowScrollRef.current.direction,\n    scrollReach: rowScrollRef.current.reach,\n    expandedGroupIds,\n`,
  },
  {
    // A row's style: its `top` alone. The library also wrote `--row-height` there: an inline custom
    // property beside a value that differs from row to row made Chromium resolve each row's style from
    // scratch. The grid's root sets `--row-height` once (web/src/grid/row-height.ts).
    find: `      onMouseEnter: handleDragEnter,\n      style: {\n        top,\n        '--row-height': \`\${height}px\`\n      },\n`,
    replace: `      onMouseEnter: handleDragEnter,\n      style: {\n        top\n      },\n`,
  },
  {
    // A cell renders its formatter alone unless it has a fill handle (only with `onFill`, which the
    // console does not use): a fragment and a child array less to reconcile in every cell of every
    // re-rendered row. (With `onFill`, selecting a cell would re-create its formatter.)
    find:
      `    children: !column.rowGroup && /*#__PURE__*/jsxs(Fragment, {\n      children: [/*#__PURE__*/jsx(column.formatter, {\n        column: column,\n        rowIdx: rowIdx,\n        row: row,\n        isCellSelected: isCellSelected,\n        onRowChange: handleRowChange\n      }), dragHandleProps && /*#__PURE__*/jsx("div", {\n`,
    replace:
      `    children: !column.rowGroup && (dragHandleProps == null ? /*#__PURE__*/jsx(column.formatter, {\n        column: column,\n        rowIdx: rowIdx,\n        row: row,\n        isCellSelected: isCellSelected,\n        onRowChange: handleRowChange\n      }) : /*#__PURE__*/jsxs(Fragment, {\n      children: [/*#__PURE__*/jsx(column.formatter, {\n        column: column,\n        rowIdx: rowIdx,\n        row: row,\n        isCellSelected: isCellSelected,\n        onRowChange: handleRowChange\n      }), dragHandleProps && /*#__PURE__*/jsx("div", {\n`,
  },
  {
    find: `        className: cellDragHandleClassname,\n        ...dragHandleProps\n      })]\n    })\n  });\n}\n`,
    replace: `        className: cellDragHandleClassname,\n        ...dragHandleProps\n      })]\n    }))\n  });\n}\n`,
  },
  {
    // The committed slots and what each slot's element showed; a render computes the next ones in
    // `pendingRowSlots`, which the layout effect below commits (a render React throws away or repeats
    // in StrictMode then computes the same keys).
    find: `  const focusSinkRef = useRef(null);\n`,
    replace:
      `  const focusSinkRef = useRef(null);\n` +
      `  const rowSlotsRef = useRef({ slots: noRowSlots, shown: new Map(), order: [] });\n` +
      `  const pendingRowSlots = useRef(null);\n` +
      // Where the last scroll event left the grid, its direction, its move and how far the next frame
      // may scroll (web/src/grid/row-window.ts, scrollReach), and the timer that ends the scroll.
      `  const rowScrollRef = useRef({ top: 0, direction: 1, delta: 0, reach: 0, at: 0, timer: null, frame: null });\n` +
      `  const [rowOrderSettled, setRowOrderSettled] = useState(true);\n` +
      // Bumped when the focus leaves a row after the scroll has ended: that render puts the rows in order.
      `  const [, setRowFocusLeft] = useState(0);\n` +
      `  useEffect(() => () => {\n    clearTimeout(rowScrollRef.current.timer);\n    cancelAnimationFrame(rowScrollRef.current.frame);\n  }, []);\n`,
  },
  {
    // A vertical scroll unsettles the rows' DOM order; ROW_ORDER_SETTLE_MS after the last one, a render
    // puts the elements in visual order. One timer a scroll, not one per event.
    //
    // The time alone does not end a scroll: when the page got no frame for that long (the process that
    // paces frames stalled, as on a loaded machine), a scroll may be in flight whose event only the next
    // frame delivers (the grid's scrollTop is not where the last event left it). Ending the scroll there
    // shrank the rows rendered in the middle of a fling and forgot its speed: the frame after showed
    // blank rows (seen in CI). Such a scroll is left to the next frame, whose scroll event comes before
    // its animation frame callbacks.
    find: `  function handleScroll(event) {\n    const {\n      scrollTop,\n      scrollLeft\n    } = event.currentTarget;\n`,
    replace:
      `  function settleRowOrder(afterFrame) {\n` +
      `    const rowScroll = rowScrollRef.current;\n` +
      `    const wait = rowScroll.at + ROW_ORDER_SETTLE_MS - performance.now();\n` +
      `    rowScroll.timer = wait > 0 ? setTimeout(settleRowOrder, wait) : null;\n` +
      `    if (wait > 0) return;\n` +
      `    if (afterFrame !== true && gridRef.current != null && gridRef.current.scrollTop !== rowScroll.top) {\n` +
      `      rowScroll.frame = requestAnimationFrame(() => {\n        rowScroll.frame = null;\n        settleRowOrder(true);\n      });\n` +
      `      return;\n` +
      `    }\n` +
      // The scroll has ended: the rows rendered shrink back to the smallest window.
      `    rowScroll.delta = 0;\n    rowScroll.reach = 0;\n    setRowOrderSettled(true);\n` +
      `  }\n\n` +
      `  function handleScroll(event) {\n    const {\n      scrollTop,\n      scrollLeft\n    } = event.currentTarget;\n` +
      `    const rowScroll = rowScrollRef.current;\n` +
      `    if (scrollTop !== rowScroll.top) {\n` +
      `      const direction = scrollTop < rowScroll.top ? -1 : 1;\n` +
      `      const delta = Math.abs(scrollTop - rowScroll.top);\n` +
      `      rowScroll.reach = scrollReach(delta, direction === rowScroll.direction ? rowScroll.delta : 0);\n` +
      `      rowScroll.delta = delta;\n` +
      `      rowScroll.direction = direction;\n` +
      `      rowScroll.top = scrollTop;\n` +
      `      rowScroll.at = performance.now();\n` +
      `      setRowOrderSettled(false);\n` +
      `      if (rowScroll.timer == null && rowScroll.frame == null) rowScroll.timer = setTimeout(settleRowOrder, ROW_ORDER_SETTLE_MS);\n` +
      `    }\n`,
  },
  {
    // The settle skips a render while the focus is in a row (below, getViewportRows), and nothing else may
    // render when it leaves (a checkbox left with an arrow key, a select closed with Escape): when the
    // focus leaves the rows after the scroll has ended, one more render puts them in order. It runs
    // once the focus has left (between the blur and the next element's focus, or after the grid's own
    // focus() of its sink), so it finds no focus in a row.
    find: `    ref: gridRef,\n    onScroll: handleScroll,\n`,
    replace: `    ref: gridRef,\n    onScroll: handleScroll,\n    onBlur: handleRowFocusLeave,\n`,
  },
  {
    find: `  function settleRowOrder(afterFrame) {\n`,
    replace:
      `  function isInRow(element) {\n` +
      `    return element instanceof Element && element !== focusSinkRef.current && gridRef.current != null && gridRef.current.contains(element) && element.closest('[role="row"]:not([aria-rowindex="1"])') != null;\n` +
      `  }\n\n` +
      `  function handleRowFocusLeave(event) {\n` +
      `    if (rowOrderSettled && isInRow(event.target) && !isInRow(event.relatedTarget)) setRowFocusLeft((n) => n + 1);\n` +
      `  }\n\n` +
      `  function settleRowOrder(afterFrame) {\n`,
  },
  {
    find: `  useImperativeHandle(ref, () => ({\n    element: gridRef.current,\n`,
    replace:
      `  useLayoutEffect(() => {\n` +
      `    const pending = pendingRowSlots.current;\n` +
      `    if (pending == null) return;\n` +
      `    pendingRowSlots.current = null;\n` +
      `    rowSlotsRef.current = pending;\n` +
      // The order was held for a focus in a row that is gone now (an editor closed, taking its focus with
      // it, so no blur came; the grid then focused its sink): render once more to put the rows in order.
      `    if (pending.held && !isInRow(document.activeElement)) setRowFocusLeft((n) => n + 1);\n` +
      `    if (pending.reused.size === 0) return;\n` +
      `    const grid = gridRef.current;\n` +
      `    const active = document.activeElement;\n` +
      `    if (grid == null || !(active instanceof HTMLElement) || active === focusSinkRef.current || !grid.contains(active)) return;\n` +
      `    const rowElement = active.closest('[role="row"]');\n` +
      `    if (rowElement == null || rowElement.parentElement !== grid) return;\n` +
      `    if (pending.reused.has(rowElement.getAttribute('aria-rowindex'))) active.blur();\n` +
      `  });\n` +
      `  useImperativeHandle(ref, () => ({\n    element: gridRef.current,\n`,
  },
  {
    // The window's size varies (with the direction of scrolling, at the table's ends, 23 or 24 rows
    // visible), and a slot left out would drop its element, to be made anew when the window grows
    // again: while scrolling, rows are rendered past the window's end until every element rendered last
    // has one. Once the scroll has ended, the window alone: the elements a fling's longer window made go.
    find: `  function getViewportRows() {\n    const rowElements = [];\n    let startRowIndex = 0;\n\n    for (let rowIdx = rowOverscanStartIdx; rowIdx <= rowOverscanEndIdx; rowIdx++) {\n`,
    replace:
      `  function getViewportRows() {\n    const rowElements = [];\n    let startRowIndex = 0;\n` +
      `    const committed = rowSlotsRef.current;\n` +
      `    const lastRowIdx = min(rows.length - 1, max(rowOverscanEndIdx, rowOverscanStartIdx + (rowOrderSettled ? 0 : committed.slots.byRow.size) - 1));\n` +
      `    const slots = assignRowSlots(committed.slots, rowOverscanStartIdx, lastRowIdx);\n\n` +
      `    for (let rowIdx = rowOverscanStartIdx; rowIdx <= lastRowIdx; rowIdx++) {\n`,
  },
  {
    // A group row's key: its slot (was `row.id`).
    find: `          toggleGroup: toggleGroupWrapper\n        }, row.id));\n`,
    replace: `          toggleGroup: toggleGroupWrapper\n        }, slots.byRow.get(rowIdx)));\n`,
  },
  {
    // A row's key: its slot (was `rowKeyGetter(row)`, or its index); `key` still names it for selection.
    find: `        selectCell: selectCellWrapper\n      }, key));\n    }\n\n    return rowElements;\n  }\n`,
    replace:
      `        selectCell: selectCellWrapper\n      }, slots.byRow.get(rowIdx)));\n    }\n\n` +
      // What each element shows now; an element that shows another row than before, other than the
      // selected one, must not keep a focus (its aria-rowindex, as the effect above finds it).
      `    const shown = new Map();\n` +
      `    const reused = new Set();\n` +
      `    for (const element of rowElements) {\n` +
      `      const { row, id, rowIdx } = element.props;\n` +
      `      const shows = row === undefined ? id : typeof rowKeyGetter === 'function' ? rowKeyGetter(row) : row;\n` +
      `      shown.set(element.key, shows);\n` +
      `      if (rowIdx !== selectedPosition.rowIdx && committed.shown.get(element.key) !== shows) reused.add(String(element.props['aria-rowindex']));\n` +
      `    }\n` +
      // While scrolling, the elements keep their places in the DOM, whatever rows they show; once the
      // scroll has ended, they are put in visual order (web/src/grid/row-slots.ts, slotOrder). Not while
      // the focus is in a row (a checkbox, an open editor): moving its element would take the focus away
      // (and close the editor); the order is restored at a later render.
      `    const focusInRow = isInRow(document.activeElement);\n` +
      `    const order = slotOrder(committed.order, slots.byRow, rowOrderSettled && !focusInRow);\n` +
      `    const place = new Map(order.map((slot, at) => [String(slot), at]));\n` +
      `    pendingRowSlots.current = { slots, shown, reused, order, held: rowOrderSettled && focusInRow };\n` +
      `    return rowElements.sort((a, b) => place.get(a.key) - place.get(b.key));\n  }\n`,
  },
];

function applyEdits(code: string): string {
  let out = code;
  for (const { find, replace } of EDITS) {
    const at = out.indexOf(find);
    if (at < 0 || out.indexOf(find, at + 1) >= 0) {
      throw new Error(`react-data-grid row-slots patch: expected exactly one ${JSON.stringify(find.slice(0, 80))}… in the library (was it upgraded? redo web/patches/react-data-grid-row-slots.ts)`);
    }
    out = out.slice(0, at) + replace + out.slice(at + find.length);
  }
  return out;
}

/** The Vite (and dependency optimizer) plugin applying the patch. */
export function reactDataGridRowSlots(): Plugin {
  return {
    name: 'basegate:react-data-grid-row-slots',
    enforce: 'pre',
    resolveId(source) {
      return MODULES[source] ?? null;
    },
    transform(code, id) {
      if (!LIBRARY.test(id.split('?')[0]!)) return null;
      return { code: applyEdits(code), map: null };
    },
  };
}
