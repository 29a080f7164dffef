import type { ChangeEvent } from '../events/index.js';

/** What every message carries besides the operation's own attributes (the webhook's data). */
export function origin(event: ChangeEvent) {
  return { op_user: event.opUser, op_app: event.opApp, op_time: event.opTime };
}
