import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';

const WEB = path.resolve(import.meta.dirname, '../../web/src');

type Values = Record<string, unknown>;
type Change = { kind?: 'cells' | 'insert' | 'delete'; rows: Array<{ rowId: string; before: Values; after: Values }> };
type Part = { change: Change; written?: Promise<unknown> };
interface History {
  use(apply: (rows: Array<{ rowId: string; values: Values }>) => Promise<unknown>, ops?: unknown, rows?: unknown): History;
  recordStep(parts: Part[]): void;
  undo(): Promise<void>;
  redo(): Promise<void>;
  canUndo: boolean;
  canRedo: boolean;
}
let UndoHistory: new () => History;
let ApiError: new (status: number, message: string) => Error;

/** A table in memory: the rows a user's direct writes change. */
function table(initial: Record<string, Values>) {
  const rows = new Map(Object.entries(initial));
  let next = 1;
  return {
    rows,
    apply: async (updates: Array<{ rowId: string; values: Values }>) => {
      for (const u of updates) rows.set(u.rowId, { ...rows.get(u.rowId), ...u.values });
    },
    writes: {
      read: async (ids: string[]) => ids.flatMap((id) => (rows.has(id) ? [{ rowId: id, values: { ...rows.get(id) } }] : [])),
      add: async (added: Values[]) =>
        added.map((values) => {
          const id = `new${next++}`;
          rows.set(id, { ...values });
          return id;
        }),
      remove: async (ids: string[]) => {
        for (const id of ids) rows.delete(id);
      },
    },
  };
}

describe('the grid undo history (web/src/grid/undo-history.ts)', () => {
  beforeAll(async () => {
    vi.stubGlobal('navigator', { languages: ['en'], language: 'en' });
    // By path at run time: vitest loads it through vite (import.meta.glob); the server's tsc does not type-check web/.
    ({ UndoHistory } = (await import(/* @vite-ignore */ path.join(WEB, 'grid/undo-history.ts'))) as { UndoHistory: typeof UndoHistory });
    ({ ApiError } = (await import(/* @vite-ignore */ path.join(WEB, 'api.ts'))) as { ApiError: typeof ApiError });
  });

  it('a user who may not restore: cells written back, an added row deleted and added again, a deleted row added again, ids followed', async () => {
    const t = table({ r1: { Name: 'B' }, r3: { Name: 'New' } });
    const denied = { latestOf: async () => 7, restore: async () => Promise.reject(new ApiError(403, 'Only the owner or an admin of the base can restore operations.')) };
    const h = new UndoHistory().use(t.apply, denied, t.writes);
    h.recordStep([{ change: { rows: [{ rowId: 'r1', before: { Name: 'A' }, after: { Name: 'B' } }] }, written: Promise.resolve() }]);
    // r2 was deleted (its cells read before), r3 added and then edited outside the history.
    h.recordStep([{ change: { kind: 'delete', rows: [{ rowId: 'r2', before: { Name: 'Beta', Qty: 2 }, after: {} }] }, written: Promise.resolve() }]);
    h.recordStep([{ change: { kind: 'insert', rows: [{ rowId: 'r3', before: {}, after: {} }] }, written: Promise.resolve() }]);

    await h.undo();
    expect([...t.rows.keys()]).toEqual(['r1']);
    await h.undo();
    expect(t.rows.get('new1')).toEqual({ Name: 'Beta', Qty: 2 });
    await h.undo();
    expect(t.rows.get('r1')).toEqual({ Name: 'A' });
    expect(h.canUndo).toBe(false);

    await h.redo();
    expect(t.rows.get('r1')).toEqual({ Name: 'B' });
    await h.redo();
    expect(t.rows.has('new1')).toBe(false);
    await h.redo();
    // Added again as it was when its add was undone.
    expect(t.rows.get('new2')).toEqual({ Name: 'New' });
    expect(h.canRedo).toBe(false);
    await h.undo();
    expect(t.rows.has('new2')).toBe(false);
    await h.undo();
    // The delete's undo again: the row as it was when the redo deleted it.
    expect(t.rows.get('new3')).toEqual({ Name: 'Beta', Qty: 2 });
  });

  it('a step refused halfway (409) steps its done parts back: whole and still undoable, nothing to redo', async () => {
    const t = table({ r1: { Name: 'Pasted' }, r2: { Name: 'New row' } });
    const calls: number[] = [];
    let refuse = new Set([11]);
    const ops = {
      latestOf: async (ids: string[]) => (ids[0] === 'r1' ? 11 : 12),
      restore: async (op: number) => {
        calls.push(op);
        if (refuse.has(op)) throw new ApiError(409, 'Row r1 was changed since');
        return op + 100;
      },
    };
    const h = new UndoHistory().use(t.apply, ops, t.writes);
    h.recordStep([
      { change: { rows: [{ rowId: 'r1', before: { Name: 'Last' }, after: { Name: 'Pasted' } }] }, written: Promise.resolve() },
      { change: { kind: 'insert', rows: [{ rowId: 'r2', before: {}, after: {} }] }, written: Promise.resolve() },
    ]);
    const refused = await h.undo().catch((e: unknown) => e as Error & { partial: boolean });
    expect(refused?.message).toBe('Undo refused: Row r1 was changed since. Nothing was undone; the step can still be undone once the conflict is resolved.');
    expect(refused?.partial).toBe(false);
    // The insert's revert (12), the refused cells (11), then the insert's revert reverted (112).
    expect(calls).toEqual([12, 11, 112]);
    expect(h.canUndo).toBe(true);
    expect(h.canRedo).toBe(false);

    // Once it may: the same step undoes whole.
    refuse = new Set();
    calls.length = 0;
    await h.undo();
    // The rows now stand as the roll-back's operation (212, the revert of 112) made them: that is reverted.
    expect(calls).toEqual([212, 11]);
    expect(h.canUndo).toBe(false);
    expect(h.canRedo).toBe(true);
  });

  it('a step refused halfway whose done parts cannot be put back either leaves both stacks, saying how much was done', async () => {
    const t = table({ r1: { Name: 'Pasted' }, r2: { Name: 'New row' } });
    const ops = {
      latestOf: async (ids: string[]) => (ids[0] === 'r1' ? 11 : 12),
      restore: async (op: number) => {
        if (op !== 12) throw new ApiError(409, 'Changed since.');
        return 112;
      },
    };
    const h = new UndoHistory().use(t.apply, ops, t.writes);
    h.recordStep([{ change: { rows: [{ rowId: 'r0', before: { Name: 'x' }, after: { Name: 'y' } }] }, written: Promise.resolve() }]);
    h.recordStep([
      { change: { rows: [{ rowId: 'r1', before: { Name: 'Last' }, after: { Name: 'Pasted' } }] }, written: Promise.resolve() },
      { change: { kind: 'insert', rows: [{ rowId: 'r2', before: {}, after: {} }] }, written: Promise.resolve() },
    ]);
    const refused = await h.undo().catch((e: unknown) => e as Error & { partial: boolean });
    expect(refused?.partial).toBe(true);
    expect(refused?.message).toMatch(/^Undo stopped halfway: Changed since\. 1 of 2 changes of the step were undone/);
    expect(h.canRedo).toBe(false);
    // The earlier step is still there, the half-done one is not.
    expect(h.canUndo).toBe(true);
    await h.undo().catch(() => undefined);
    expect(h.canUndo).toBe(false);
  });
});
