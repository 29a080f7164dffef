import { sql } from 'kysely';
import type { Db } from '../../db/index.js';

/**
 * Waits until every transaction of this database that has written (has an xid) now has ended
 * (PostgreSQL): those may have written rows before a new set's definition was visible to the trigger
 * that fills it (jump-sets.ts, group-sets.ts). Gives up after 5 minutes, naming `what` waited.
 */
export async function waitForOlderTransactions(db: Db, what: string): Promise<void> {
  const running = sql<{ xid: string }>`select backend_xid::text as xid from pg_stat_activity where datname = current_database() and backend_xid is not null and pid <> pg_backend_pid()`;
  const before = new Set((await running.execute(db)).rows.map((r) => r.xid));
  for (let i = 0; before.size > 0; i++) {
    if (i >= 6000) throw new Error(`${what}: older transactions did not end within 5 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const still = new Set((await running.execute(db)).rows.map((r) => r.xid));
    for (const xid of before) if (!still.has(xid)) before.delete(xid);
  }
}
