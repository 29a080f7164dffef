import { useCallback, useRef, useState } from 'react';
import { UndoHistory, type Change, type OperationRestore, type Part, type RowWrites } from './undo-history';

export { UndoHistory, UndoRefused, type Change, type OperationRestore, type Part, type RowWrites } from './undo-history';

/** The user's undo and redo in a component: `UndoHistory` with the component's writers of the moment, re-rendering on a change. */
export function useUndo(apply: (rows: Array<{ rowId: string; values: Record<string, unknown> }>) => Promise<unknown>, ops?: OperationRestore, rows?: RowWrites) {
  const [, setVersion] = useState(0);
  const history = useRef<UndoHistory>();
  if (!history.current) history.current = new UndoHistory(() => setVersion((v) => v + 1));
  const h = history.current.use(apply, ops, rows);
  const recordStep = useCallback((parts: Part[]) => h.recordStep(parts), [h]);
  /** Records a change; `written` settles when its write is stored (then its operation is looked up). */
  const record = useCallback((change: Change, written?: Promise<unknown>) => h.recordStep([{ change, written }]), [h]);
  return {
    record,
    recordStep,
    undo: () => h.undo(),
    redo: () => h.redo(),
    canUndo: h.canUndo,
    canRedo: h.canRedo,
  };
}
