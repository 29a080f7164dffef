import { ApiError } from '../api';
import { t } from '../i18n';
import { serverErrorText } from '../server-errors';

/**
 * One part of a step the user made, as one logged operation: cells of one or more rows, each with its
 * value before and after (`cells`), or rows added (`insert`) or deleted (`delete`), whose `before` (a
 * deleted row) or `after` (an added row) hold the row's cells when known, to put it back by writing it
 * for a user who may not restore.
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

/** Rows written directly: the undo of added or deleted rows for a user who may not restore operations. */
export interface RowWrites {
  /** The rows' writable cells as stored now (rows not found are left out). */
  read(rowIds: string[]): Promise<Array<{ rowId: string; values: Record<string, unknown> }>>;
  /** Appends rows; resolves to their new ids, in order. */
  add(rows: Array<Record<string, unknown>>): Promise<string[]>;
  remove(rowIds: string[]): Promise<void>;
}

/** An undo or redo the server refused; `partial` when the parts already stepped could not be put back either. */
export class UndoRefused extends Error {
  constructor(
    message: string,
    readonly partial: boolean,
  ) {
    super(message);
  }
}

const DEPTH = 100;

type Stack = { current: Change[][] };

/**
 * The user's own cell edits, added and deleted rows as an undo and a redo stack (up to 100 steps, each of
 * one or more logged operations). Undo reverts the step's
 * logged operation with `restore-operations/` (a new write the server checks: a later change by
 * someone else to the same cells refuses with 409 rather than being overwritten); redo reverts that
 * revert. Users who may not restore (read-write, not admin: 403; the server keeps reverts to owners and
 * admins) fall back to doing by hand what they could do themselves, as does a change whose operation is
 * not known: cells get their "before" or "after" values written with `apply`; an added row is deleted
 * (its cells read first, so a redo adds it again as it was) and a deleted row is added again from its
 * cells (`rows`). A row added again has a new id: the steps that name the old one follow it (`alias`).
 * Without `rows`, added or deleted rows are not undoable for them (such a part leaves the step).
 *
 * A step refused halfway (e.g. 409: someone else changed the same cells since) is rolled back: the parts
 * already stepped are stepped back again, so the step stays whole where it was, and the user is told
 * (`UndoRefused`). If that roll-back fails too, the step is dropped from both stacks (it is half done and
 * can be neither undone nor redone truthfully) and the message says so.
 */
export class UndoHistory {
  private readonly undoStack: Stack = { current: [] };
  private readonly redoStack: Stack = { current: [] };
  private mayRestore = true;
  /** Old row id → the id of the row added again in its place (by an undo of a delete, a redo of an add). */
  private readonly alias = new Map<string, string>();
  private apply: (rows: Array<{ rowId: string; values: Record<string, unknown> }>) => Promise<unknown> = async () => undefined;
  private ops: OperationRestore | undefined;
  private rows: RowWrites | undefined;

  /** `changed`: called whenever the stacks change (a React hook re-renders). */
  constructor(private readonly changed: () => void = () => undefined) {}

  /** The writers of the moment (a component's closures are new at each render). */
  use(apply: (rows: Array<{ rowId: string; values: Record<string, unknown> }>) => Promise<unknown>, ops?: OperationRestore, rows?: RowWrites): this {
    this.apply = apply;
    this.ops = ops;
    this.rows = rows;
    return this;
  }

  get canUndo(): boolean {
    return this.undoStack.current.length > 0;
  }

  get canRedo(): boolean {
    return this.redoStack.current.length > 0;
  }

  /** Records one step of one or more parts (e.g. a paste's cell edits and the rows it appends); `written` settles when a part's write is stored (then its operation is looked up). */
  recordStep(parts: Part[]): void {
    if (parts.length === 0) return;
    const ops = this.ops;
    for (const { change, written } of parts)
      if (ops && written) change.opId = written.then(() => ops.latestOf(change.rows.map((r) => r.rowId))).catch(() => undefined);
    this.undoStack.current = [...this.undoStack.current.slice(-(DEPTH - 1)), parts.map((p) => p.change)];
    this.redoStack.current = [];
    this.changed();
  }

  undo(): Promise<void> {
    return this.step(this.undoStack, this.redoStack, 'before');
  }

  redo(): Promise<void> {
    return this.step(this.redoStack, this.undoStack, 'after');
  }

  private current(id: string): string {
    let at = id;
    for (let hops = 0; this.alias.has(at) && hops < 1000; hops++) at = this.alias.get(at)!;
    return at;
  }

  /** Reverts `opId` on the server; undefined when this user may not (then values are written instead). */
  private async revert(opId: number | undefined): Promise<{ id: number | undefined } | undefined> {
    const ops = this.ops;
    if (!ops || !this.mayRestore || opId === undefined) return undefined;
    try {
      return { id: await ops.restore(opId) };
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) {
        this.mayRestore = false;
        return undefined;
      }
      throw error;
    }
  }

  /** Undoes (`before`) or redoes (`after`) one part; false when it cannot be (rows, without the right to restore). */
  private async stepPart(change: Change, side: 'before' | 'after'): Promise<boolean> {
    // The operation the opposite step will revert is set now and settles when this step is done, so a
    // redo pressed while its undo still looks up its operation waits for it instead of writing values.
    const target = side === 'before' ? change.opId : change.undoneBy;
    const previous = side === 'before' ? change.undoneBy : change.opId;
    let settle!: (id: number | undefined) => void;
    const outcome = new Promise<number | undefined>((resolve) => (settle = resolve));
    if (side === 'before') change.undoneBy = outcome;
    else change.opId = outcome;
    try {
      const reverted = await this.revert(await target);
      if (reverted) {
        settle(reverted.id);
        return true;
      }
      const kind = change.kind ?? 'cells';
      if (kind !== 'cells') {
        // A restore keeps the rows' ids, links and comments; by hand, a row is deleted or added again.
        if (!this.rows) {
          settle(undefined);
          return false;
        }
        const adding = (kind === 'insert') === (side === 'after');
        await (adding ? this.addAgain(change, side) : this.removeRows(change, side === 'before' ? 'after' : 'before'));
        settle(undefined);
        return true;
      }
      const written = this.apply(change.rows.map((r) => ({ rowId: this.current(r.rowId), values: r[side] })));
      const ops = this.ops;
      const next = ops ? Promise.resolve(written).then(() => ops.latestOf(change.rows.map((r) => this.current(r.rowId)))) : Promise.resolve(undefined);
      void next.then(settle, () => settle(undefined));
      await written;
      return true;
    } catch (error) {
      if (side === 'before') change.undoneBy = previous;
      else change.opId = previous;
      void Promise.resolve(previous).then(settle, () => settle(undefined));
      throw error;
    }
  }

  /** Deletes the part's rows, keeping their cells as they are now in `keep` (to add them again). */
  private async removeRows(change: Change, keep: 'before' | 'after'): Promise<void> {
    const ids = change.rows.map((r) => this.current(r.rowId));
    if (ids.length === 0) return;
    const now = new Map((await this.rows!.read(ids)).map((r) => [r.rowId, r.values]));
    change.rows.forEach((r, i) => {
      const values = now.get(ids[i]!);
      if (values) r[keep] = values;
    });
    await this.rows!.remove(ids);
  }

  /** Adds the part's rows again from their kept cells (`from`); the new ids stand in for the old ones. */
  private async addAgain(change: Change, from: 'before' | 'after'): Promise<void> {
    if (change.rows.length === 0) return;
    const ids = await this.rows!.add(change.rows.map((r) => r[from]));
    change.rows.forEach((r, i) => {
      const id = ids[i];
      if (id) this.alias.set(this.current(r.rowId), id);
    });
  }

  private async step(from: Stack, to: Stack, side: 'before' | 'after'): Promise<void> {
    const parts = from.current.at(-1);
    if (!parts) return;
    from.current = from.current.slice(0, -1);
    to.current = [...to.current, parts];
    this.changed();
    // Undo reverts the parts newest first, redo replays them in their order.
    const order = side === 'before' ? [...parts].reverse() : parts;
    const done: Change[] = [];
    try {
      for (const change of order) if (await this.stepPart(change, side)) done.push(change);
    } catch (error) {
      // Refused (e.g. 409: someone changed the same cells since): the parts already stepped are stepped
      // back, newest first, so the step is whole again where it was.
      const text = error instanceof ApiError ? serverErrorText(error.message) : error instanceof Error ? error.message : String(error);
      const reason = /[.!?]$/.test(text) ? text : `${text}.`;
      const what = side === 'before' ? 'undo' : 'redo';
      try {
        for (const change of [...done].reverse()) await this.stepPart(change, side === 'before' ? 'after' : 'before');
      } catch {
        // Half done and not put back: neither stack keeps it (a redo would replay what is not there).
        to.current = to.current.filter((p) => p !== parts);
        this.changed();
        throw new UndoRefused(t(`undo.${what}Partial`, { reason, done: done.length, count: parts.length }), true);
      }
      to.current = to.current.filter((p) => p !== parts);
      from.current = [...from.current, parts];
      this.changed();
      throw new UndoRefused(t(`undo.${what}Refused`, { reason }), false);
    }
    // Parts that cannot be stepped (rows, for a user who may not restore, without `rows`) leave the step.
    if (done.length < parts.length) {
      const kept = parts.filter((c) => done.includes(c));
      to.current = to.current.filter((p) => p !== parts);
      if (kept.length > 0) to.current = [...to.current, kept];
      this.changed();
    }
  }
}
