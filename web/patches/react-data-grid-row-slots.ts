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
 * enters it, and the elements are emitted in slot order so React never moves one (a moved element is
 * restyled like a new one). Rows are placed by their `top` and carry `aria-rowindex`, so the DOM order
 * is not the visual order while scrolling (as in other recycling grids). Reuse alone restyled as much
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
 * The patch is applied to the library's module by Vite (build and dev server); no file in
 * node_modules is changed. Every edit must match exactly once, or the build fails: a new version of the
 * library needs the patch redone.
 */
const LIBRARY = /[\\/]node_modules[\\/]react-data-grid[\\/]lib[\\/]bundle\.js$/;
const SLOTS_MODULE = 'basegate:row-slots';
const SLOTS_FILE = fileURLToPath(new URL('../src/grid/row-slots.ts', import.meta.url));

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
    replace: `import { createPortal } from 'react-dom';\nimport { assignRowSlots, noRowSlots } from '${SLOTS_MODULE}';\n`,
  },
  {
    // The committed slots and what each slot's element showed; a render computes the next ones in
    // `pendingRowSlots`, which the layout effect below commits (a render React throws away or repeats
    // in StrictMode then computes the same keys).
    find: `  const focusSinkRef = useRef(null);\n`,
    replace:
      `  const focusSinkRef = useRef(null);\n` +
      `  const rowSlotsRef = useRef({ slots: noRowSlots, shown: new Map() });\n` +
      `  const pendingRowSlots = useRef(null);\n`,
  },
  {
    find: `  useImperativeHandle(ref, () => ({\n    element: gridRef.current,\n`,
    replace:
      `  useLayoutEffect(() => {\n` +
      `    const pending = pendingRowSlots.current;\n` +
      `    if (pending == null) return;\n` +
      `    pendingRowSlots.current = null;\n` +
      `    rowSlotsRef.current = pending;\n` +
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
    // The window's size varies with the scroll position (batches of 8), and a slot left out would
    // drop its element, to be made anew when the window grows again: rows are rendered past the
    // window's end until every slot handed out so far has one (a few rows below the view).
    find: `  function getViewportRows() {\n    const rowElements = [];\n    let startRowIndex = 0;\n\n    for (let rowIdx = rowOverscanStartIdx; rowIdx <= rowOverscanEndIdx; rowIdx++) {\n`,
    replace:
      `  function getViewportRows() {\n    const rowElements = [];\n    let startRowIndex = 0;\n` +
      `    const committed = rowSlotsRef.current;\n` +
      `    const lastRowIdx = min(rows.length - 1, max(rowOverscanEndIdx, rowOverscanStartIdx + committed.slots.count - 1));\n` +
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
      `    pendingRowSlots.current = { slots, shown, reused };\n` +
      // In slot order: the elements keep their places in the DOM, whatever rows they show.
      `    return rowElements.sort((a, b) => Number(a.key) - Number(b.key));\n  }\n`,
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
      return source === SLOTS_MODULE ? SLOTS_FILE : null;
    },
    transform(code, id) {
      if (!LIBRARY.test(id.split('?')[0]!)) return null;
      return { code: applyEdits(code), map: null };
    },
  };
}
