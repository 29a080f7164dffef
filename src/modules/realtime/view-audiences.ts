import type { Executor } from '../../db/index.js';
import { viewShareUsers } from '../access/index.js';
import { parseFilters, usesCurrentUser } from '../filters/index.js';
import { loadMetadata, type BaseMetadata } from '../rows/index.js';
import { lensOf, type ViewLens } from './view-operations.js';
import { viewRoom } from './rooms.js';

/**
 * Who may be listening to a base through view shares, and in which rooms: per shared view, the users it
 * reaches (their own view shares and their groups'), each in a room of their own (`viewRoom`).
 */
export interface ViewAudience {
  /** The view's table and the view as they are now. */
  lens: ViewLens;
  /** Each holder's room and virtual id (the current user its filters see). */
  holders: Array<{ room: string; currentUser: string | undefined }>;
}

/** One filtering of a view's changes: its rooms, and the current user its filters see (absent: none named). */
export interface ViewTarget {
  rooms: string[];
  currentUser?: string;
}

/** How a view's changes are filtered for its holders: once per holder when its filters name the current user, else once for all. */
export function targetsOf(lens: ViewLens, holders: ViewAudience['holders']): ViewTarget[] {
  const { table, view } = lens;
  const parsed = parseFilters({ filters: Array.isArray(view.filters) ? view.filters : [], filter_conjunction: view.filter_conjunction }, table.columns);
  if (parsed.ok && usesCurrentUser(parsed.filter)) return holders.map((h) => ({ rooms: [h.room], currentUser: h.currentUser }));
  return [{ rooms: holders.map((h) => h.room) }];
}

/** The view audiences of each base (bases without view shares are absent). One query per batch when none has any. */
export async function viewAudiences(db: Executor, bases: ReadonlyArray<{ id: number; uuid: string }>): Promise<Map<number, ViewAudience[]>> {
  const result = new Map<number, ViewAudience[]>();
  const reached = await viewShareUsers(db, bases.map((b) => b.id));
  if (reached.length === 0) return result;
  const virtualIds = new Map(
    (await db.selectFrom('users').select(['id', 'virtual_id']).where('id', 'in', [...new Set(reached.map((r) => r.user_id))]).execute()).map((u) => [Number(u.id), u.virtual_id]),
  );
  for (const base of bases) {
    const shares = reached.filter((r) => r.base_id === base.id);
    if (shares.length === 0) continue;
    let meta: BaseMetadata;
    try {
      meta = await loadMetadata(db, base.id);
    } catch {
      continue; // the base is gone
    }
    const audiences: ViewAudience[] = [];
    for (const viewId of new Set(shares.map((s) => s.view_id))) {
      const tableId = shares.find((s) => s.view_id === viewId)!.table_id;
      const table = meta.tables.find((t) => t._id === tableId);
      const view = table?.views.find((v) => v._id === viewId);
      if (!table || !view) continue;
      const users = [...new Set(shares.filter((s) => s.view_id === viewId).map((s) => s.user_id))];
      audiences.push({ lens: lensOf(table, view), holders: users.map((id) => ({ room: viewRoom(base.uuid, viewId, id), currentUser: virtualIds.get(id) })) });
    }
    if (audiences.length > 0) result.set(base.id, audiences);
  }
  return result;
}
