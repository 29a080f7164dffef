import { useCallback, useRef, useState } from 'react';
import { ApiError } from '../api';

/** One change the user made: cells of one or more rows, each with its value before and after. */
export interface Change {
  rows: Array<{ rowId: string; before: Record<string, unknown>; after: Record<string, unknown> }>;
  /** The logged operation that made the change as it stands now (the write, or the redo), once known. */
  opId?: Promise<number | undefined>;
  /** The operation that undid it (restored on redo). */
  undoneBy?: Promise<number | undefined>;
}

/** The server's operation log as undo uses it (`restore-operations/`): owner and admins only. */
export interface OperationRestore {
  /** The newest logged operation that changed these rows (the write just made). */
  latestOf(rowIds: string[]): Promise<number | undefined>;
  /** Reverts an operation; resolves to the id of the reverting operation. */
  restore(opId: number): Promise<number | undefined>;
}

const DEPTH = 100;

/**
 * The user's own cell edits as an undo and a redo stack (up to 100 steps). Undo reverts the edit's
 * logged operation with `restore-operations/` (a new write the server checks: a later change by
 * someone else to the same cells refuses with 409 rather than being overwritten); redo reverts that
 * revert. Users who may not restore (read-write, not admin: 403) fall back to writing the "before"
 * or "after" values with `apply`, as does a change whose operation is not known.
 */
export function useUndo(apply: (rows: Array<{ rowId: string; values: Record<string, unknown> }>) => Promise<unknown>, ops?: OperationRestore) {
  const undoStack = useRef<Change[]>([]);
  const redoStack = useRef<Change[]>([]);
  const mayRestore = useRef(ops !== undefined);
  const [, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);

  /** Records a change; `written` settles when its write is stored (then its operation is looked up). */
  const record = useCallback((change: Change, written?: Promise<unknown>) => {
    if (ops && written) change.opId = written.then(() => ops.latestOf(change.rows.map((r) => r.rowId))).catch(() => undefined);
    undoStack.current = [...undoStack.current.slice(-(DEPTH - 1)), change];
    redoStack.current = [];
    bump();
  }, [ops]);

  /** Reverts `opId` on the server; undefined when this user may not (then values are written instead). */
  const revert = async (opId: number | undefined): Promise<{ id: number | undefined } | undefined> => {
    if (!ops || !mayRestore.current || opId === undefined) return undefined;
    try {
      return { id: await ops.restore(opId) };
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) {
        mayRestore.current = false;
        return undefined;
      }
      throw error;
    }
  };

  const step = async (from: typeof undoStack, to: typeof undoStack, side: 'before' | 'after') => {
    const change = from.current.at(-1);
    if (!change) return;
    from.current = from.current.slice(0, -1);
    to.current = [...to.current, change];
    bump();
    // The operation the opposite step will revert is set now and settles when this step is done, so a
    // redo pressed while its undo still looks up its operation waits for it instead of writing values.
    const target = side === 'before' ? change.opId : change.undoneBy;
    const previous = side === 'before' ? change.undoneBy : change.opId;
    let settle!: (id: number | undefined) => void;
    const outcome = new Promise<number | undefined>((resolve) => (settle = resolve));
    if (side === 'before') change.undoneBy = outcome;
    else change.opId = outcome;
    try {
      const reverted = await revert(await target);
      if (reverted) {
        settle(reverted.id);
        return;
      }
      const written = apply(change.rows.map((r) => ({ rowId: r.rowId, values: r[side] })));
      const next = ops ? Promise.resolve(written).then(() => ops.latestOf(change.rows.map((r) => r.rowId))) : Promise.resolve(undefined);
      void next.then(settle, () => settle(undefined));
      await written;
    } catch (error) {
      // Refused (e.g. 409: someone changed the same cells since): the step stays where it was.
      if (side === 'before') change.undoneBy = previous;
      else change.opId = previous;
      void Promise.resolve(previous).then(settle, () => settle(undefined));
      to.current = to.current.slice(0, -1);
      from.current = [...from.current, change];
      bump();
      throw error;
    }
  };

  return {
    record,
    undo: () => step(undoStack, redoStack, 'before'),
    redo: () => step(redoStack, undoStack, 'after'),
    canUndo: undoStack.current.length > 0,
    canRedo: redoStack.current.length > 0,
  };
}
