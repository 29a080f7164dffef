/** Which bases have live listeners, refreshed by each instance (see presence.ts). */
export interface RealtimePresenceTable {
  base_id: number;
  /** Milliseconds since the epoch: until then the base counts as listened to. */
  expires_at: number;
}
