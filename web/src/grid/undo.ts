import { useCallback, useRef, useState } from 'react';

/** One change the user made: cells of one or more rows, each with its value before and after. */
export interface Change {
  rows: Array<{ rowId: string; before: Record<string, unknown>; after: Record<string, unknown> }>;
}

const DEPTH = 100;

/**
 * The user's own cell edits as an undo and a redo stack (up to 100 steps). `apply` writes a set of
 * values to the server (the caller's update); undo writes the "before" values, redo the "after".
 */
export function useUndo(apply: (rows: Array<{ rowId: string; values: Record<string, unknown> }>) => Promise<unknown>) {
  const undoStack = useRef<Change[]>([]);
  const redoStack = useRef<Change[]>([]);
  const [, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);

  const record = useCallback((change: Change) => {
    undoStack.current = [...undoStack.current.slice(-(DEPTH - 1)), change];
    redoStack.current = [];
    bump();
  }, []);

  const step = async (from: typeof undoStack, to: typeof undoStack, side: 'before' | 'after') => {
    const change = from.current.at(-1);
    if (!change) return;
    from.current = from.current.slice(0, -1);
    to.current = [...to.current, change];
    bump();
    await apply(change.rows.map((r) => ({ rowId: r.rowId, values: r[side] })));
  };

  return {
    record,
    undo: () => step(undoStack, redoStack, 'before'),
    redo: () => step(redoStack, undoStack, 'after'),
    canUndo: undoStack.current.length > 0,
    canRedo: redoStack.current.length > 0,
  };
}
