import type { Server } from 'socket.io';

/** An entry of socket.io's in-memory recovery buffer (`SessionAwareAdapter.packets`, typed private). */
type Kept = { data: unknown[] };

function bytesOf(entry: Kept): number {
  let bytes = 0;
  for (const arg of entry.data) bytes += typeof arg === 'string' ? arg.length : 16;
  return bytes;
}

/**
 * Bounds in bytes the broadcasts socket.io keeps in memory for connection-state recovery (without
 * Redis; with it they are in the Redis stream): the oldest are dropped first once the total passes
 * `maxBytes`, besides socket.io's own expiry after the recovery window. A client whose last seen
 * broadcast was dropped is not recovered (`recovered` false) and reloads the base, as after the window.
 */
export function boundRecoveryBuffer(io: Server, maxBytes: number): void {
  const adapter = io.of('/').adapter as unknown as { packets?: Kept[]; broadcast: (...args: unknown[]) => unknown };
  const packets = adapter.packets;
  if (!Array.isArray(packets)) return; // not the in-memory session adapter
  const sizes: Array<{ entry: Kept; bytes: number }> = [];
  let total = 0;
  const broadcast = adapter.broadcast.bind(adapter);
  adapter.broadcast = (...args: unknown[]) => {
    const result = broadcast(...args);
    // Entries socket.io expired itself (always from the front).
    while (sizes.length > 0 && sizes[0]!.entry !== packets[0]) total -= sizes.shift()!.bytes;
    const last = packets[packets.length - 1];
    if (last && last !== sizes[sizes.length - 1]?.entry) {
      const bytes = bytesOf(last);
      sizes.push({ entry: last, bytes });
      total += bytes;
    }
    while (total > maxBytes && sizes.length > 0) {
      packets.shift();
      total -= sizes.shift()!.bytes;
    }
    return result;
  };
}
