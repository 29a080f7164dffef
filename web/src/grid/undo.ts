import { useCallback, useRef, useState } from 'react';
import { ApiError } from '../api';

/**
 * One part of a step the user made, as one logged operation: cells of one or more rows, each with its
 * value before and after (`cells`), or rows added (`insert`) or deleted (`delete`), whose `before` and
 * `after` are empty.
 */
export interface Change {
  kind?: 'cells' | 'insert' | 'delete';
  rows: Array<{ rowId: string; before: Record<string, unknown>; after: Record<string, unknown> }>;
  /** The logged operation that made the change as it stands now (the write, or the redo), once known. */
  opId?: Promise<number | undefined>;
  /** The operation that undid it (restored on redo). */
  undoneBy?: Promise<number | undefined>;
}

/** A change and the write that makes it (settled once stored; an insert's fills in its rows' ids first). */
export type Part = { change: Change; written?: Promise<unknown> };

/** The server's operation log as undo uses it (`restore-operations/`): owner and admins only. */
export interface OperationRestore {
  /** The newest logged operation that changed these rows (the write just made). */
  latestOf(rowIds: string[]): Promise<number | undefined>;
  /** Reverts an operation; resolves to the id of the reverting operation. */
  restore(opId: number): Promise<number | undefined>;
}

const DEPTH = 100;

/**
 * The user's own cell edits, added and deleted rows as an undo and a redo stack (up to 100 steps, each of
 * one or more logged operations). Undo reverts the step's
 * logged operation with `restore-operations/` (a new write the server checks: a later change by
 * someone else to the same cells refuses with 409 rather than being overwritten); redo reverts that
 * revert. Users who may not restore (read-write, not admin: 403) fall back to writing the "before"
 * or "after" values with `apply`, as does a change whose operation is not known; for them added or
 * deleted rows are not undoable (a step of rows only leaves the stack).
 */
export function useUndo(apply: (rows: Array<{ rowId: string; values: Record<string, unknown> }>) => Promise<unknown>, ops?: OperationRestore) {
  const undoStack = useRef<Change[][]>([]);
  const redoStack = useRef<Change[][]>([]);
  const mayRestore = useRef(ops !== undefined);
  const [, setVersion] = useState(0);
  const bump = () => setVersion((v) => v + 1);

  /** Records one step of one or more parts (e.g. a paste's cell edits and the rows it appends). */
  const recordStep = useCallback((parts: Part[]) => {
    if (parts.length === 0) return;
    for (const { change, written } of parts)
      if (ops && written) change.opId = written.then(() => ops.latestOf(change.rows.map((r) => r.rowId))).catch(() => undefined);
    undoStack.current = [...undoStack.current.slice(-(DEPTH - 1)), parts.map((p) => p.change)];
    redoStack.current = [];
    bump();
  }, [ops]);
  /** Records a change; `written` settles when its write is stored (then its operation is looked up). */
  const record = useCallback((change: Change, written?: Promise<unknown>) => recordStep([{ change, written }]), [recordStep]);

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

  /** Undoes (`before`) or redoes (`after`) one part; false when it cannot be (rows, without the right to restore). */
  const stepPart = async (change: Change, side: 'before' | 'after'): Promise<boolean> => {
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
        return true;
      }
      // Added or deleted rows are put back only by a restore (it keeps their ids, links and comments).
      if ((change.kind ?? 'cells') !== 'cells') {
        settle(undefined);
        return false;
      }
      const written = apply(change.rows.map((r) => ({ rowId: r.rowId, values: r[side] })));
      const next = ops ? Promise.resolve(written).then(() => ops.latestOf(change.rows.map((r) => r.rowId))) : Promise.resolve(undefined);
      void next.then(settle, () => settle(undefined));
      await written;
      return true;
    } catch (error) {
      if (side === 'before') change.undoneBy = previous;
      else change.opId = previous;
      void Promise.resolve(previous).then(settle, () => settle(undefined));
      throw error;
    }
  };

  const step = async (from: typeof undoStack, to: typeof undoStack, side: 'before' | 'after') => {
    const parts = from.current.at(-1);
    if (!parts) return;
    from.current = from.current.slice(0, -1);
    to.current = [...to.current, parts];
    bump();
    // Undo reverts the parts newest first, redo replays them in their order.
    const order = side === 'before' ? [...parts].reverse() : parts;
    const done: Change[] = [];
    try {
      for (const change of order) if (await stepPart(change, side)) done.push(change);
      // Parts that cannot be stepped (rows, for a user who may not restore) leave the step.
      if (done.length < parts.length) {
        const kept = parts.filter((c) => done.includes(c));
        to.current = kept.length > 0 ? [...to.current.slice(0, -1), kept] : to.current.slice(0, -1);
        bump();
      }
    } catch (error) {
      // Refused (e.g. 409: someone changed the same cells since): the step stays where it was; the
      // parts already stepped stay stepped (their operations are known, a later step reverts them).
      to.current = to.current.slice(0, -1);
      from.current = [...from.current, parts];
      bump();
      throw error;
    }
  };

  return {
    record,
    recordStep,
    undo: () => step(undoStack, redoStack, 'before'),
    redo: () => step(redoStack, undoStack, 'after'),
    canUndo: undoStack.current.length > 0,
    canRedo: redoStack.current.length > 0,
  };
}
