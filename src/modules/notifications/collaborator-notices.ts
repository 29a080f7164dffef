import type { Executor } from '../../db/index.js';
import type { NewChangeEvent } from '../events/index.js';
import { membersOf } from './base-context.repository.js';
import { writeNotices, type Notice } from './notify.js';

export const MSG_TYPE_SELECTED_COLLABORATOR = 'selected_collaborator';

const asIds = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** Per event: the virtual ids put into its collaborator cells that were not there before. */
function addedCollaborators(event: NewChangeEvent): Set<string> {
  const added = new Set<string>();
  if (event.opType !== 'insert_row' && event.opType !== 'modify_row') return added;
  for (const cell of event.rowData) {
    if (cell.column_type !== 'collaborator') continue;
    const before = new Set(asIds(cell.old_value));
    for (const id of asIds(cell.value)) if (!before.has(id)) added.add(id);
  }
  return added;
}

/**
 * Writes a `selected_collaborator` notification, in the write's transaction, for each user a write
 * put into a collaborator cell: only users newly added, only members of the base. A user who puts
 * themselves into a cell is notified too, as the original's 6.0.10 answers show.
 */
export async function noticeSelectedCollaborators(trx: Executor, events: NewChangeEvent[], now: number, emailDelayMs: number): Promise<void> {
  const wanted = events.map((e) => ({ event: e, added: addedCollaborators(e) })).filter((x) => x.added.size > 0);
  if (wanted.length === 0) return;
  const baseIds = [...new Set(wanted.map((x) => x.event.baseId))];
  const members = new Map<string, number>(); // `${baseId}:${virtualId}` → user id
  // (Users with view shares only are left out: whether the row is in their view is not judged here.)
  for (const m of await membersOf(trx, baseIds)) if (!m.views) members.set(`${m.base_id}:${m.virtual_id}`, m.user_id);
  const notices: Notice[] = [];
  for (const { event, added } of wanted) {
    for (const virtualId of added) {
      const userId = members.get(`${event.baseId}:${virtualId}`);
      if (userId === undefined) continue;
      notices.push({
        userId,
        msgType: MSG_TYPE_SELECTED_COLLABORATOR,
        detail: { author: event.opUser, row_id: event.rowId, table_id: event.tableId },
        baseId: event.baseId,
        dtableUuid: event.baseUuid,
      });
    }
  }
  if (notices.length > 0) await writeNotices(trx, notices, now, emailDelayMs);
}
