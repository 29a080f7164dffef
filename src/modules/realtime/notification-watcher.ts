import type { Server } from 'socket.io';
import type { Db } from '../../db/index.js';
import { baseNotice } from '../notifications/index.js';
import { userRoom } from './rooms.js';

const BATCH = 500;
/** A missing id older than this is a rolled-back or skipped one, not a commit still to come. */
const GAP_TIMEOUT_MS = 10_000;

/**
 * Pushes every committed notification to its user's sockets on THIS instance (`new-notification`).
 * Every instance watches the `notifications` table itself and sends only to its own sockets, so a
 * notification reaches each connected socket once, whichever instance wrote it, and only after its
 * transaction committed. Ids below the highest seen that are still missing (a PostgreSQL transaction
 * that took its id earlier but commits later) are looked for again until GAP_TIMEOUT_MS.
 */
export class NotificationWatcher {
  /** Every id up to here was pushed or given up; -1 until the first pass (which starts at the newest). */
  private low = -1;
  /** Ids above `low` already pushed. */
  private readonly pushed = new Set<number>();
  private gapSince: number | null = null;

  constructor(
    private readonly db: Db,
    private readonly io: Server,
  ) {}

  /** One look at the table (run by a Poller: every 250 ms, and when woken). */
  async pass(): Promise<void> {
    if (this.low < 0 || this.io.of('/').sockets.size === 0) {
      // Nobody to tell yet: only remember where the newest is, so a socket that connects from now on
      // gets every notification committed after this point.
      const row = await this.db.selectFrom('notifications').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
      this.low = Number(row?.id ?? 0);
      this.pushed.clear();
      return;
    }
    const rows = await this.db
      .selectFrom('notifications')
      .innerJoin('users', 'users.id', 'notifications.user_id')
      .selectAll('notifications')
      .select('users.virtual_id')
      .where('notifications.id', '>', this.low)
      .orderBy('notifications.id')
      .limit(BATCH)
      .execute();
    for (const row of rows) {
      const id = Number(row.id);
      if (this.pushed.has(id)) continue;
      this.pushed.add(id);
      this.io.local.to(userRoom(Number(row.user_id))).emit('new-notification', JSON.stringify(baseNotice(row, row.virtual_id)));
    }
    this.advance(rows.length === BATCH);
  }

  private advance(full: boolean): void {
    while (this.pushed.delete(this.low + 1)) this.low += 1;
    if (this.pushed.size === 0) {
      this.gapSince = null;
      return;
    }
    const now = Date.now();
    this.gapSince ??= now;
    if (full || now - this.gapSince >= GAP_TIMEOUT_MS) {
      this.low = Math.min(...this.pushed) - 1;
      while (this.pushed.delete(this.low + 1)) this.low += 1;
      this.gapSince = null;
    }
  }
}
