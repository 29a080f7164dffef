import type { Generated } from 'kysely';
import type { EventColumnsTable, EventsTable } from './events.table.js';

/** Events of a multi-batch write kept out of the outbox until it is done (migration 0023, held-events.ts). */
export interface HeldEventsTable extends Omit<EventsTable, 'id'> {
  id: Generated<number>;
  hold_id: string;
}

export interface HeldEventColumnsTable extends EventColumnsTable {
  hold_id: string;
}

/** One batch's held events as a JSON array (migration 0035, held-events.ts). */
export interface HeldEventBatchesTable {
  id: Generated<number>;
  hold_id: string;
  write_id: string;
  created_at: number;
  events: string;
}
