/**
 * Counts this instance's live connections per key (client address, credential) against a cap.
 * Each socket is counted at most once per key.
 */
export class ConnectionCounter {
  private readonly sockets = new Map<string, Set<string>>();

  constructor(private readonly max: number) {}

  /** Counts `socketId` under `key`; false (and nothing counted) when the key is at its cap. */
  add(key: string, socketId: string): boolean {
    let set = this.sockets.get(key);
    if (set?.has(socketId)) return true;
    if (set && set.size >= this.max) return false;
    if (!set) this.sockets.set(key, (set = new Set()));
    set.add(socketId);
    return true;
  }

  remove(key: string, socketId: string): void {
    const set = this.sockets.get(key);
    if (!set) return;
    set.delete(socketId);
    if (set.size === 0) this.sockets.delete(key);
  }

  count(key: string): number {
    return this.sockets.get(key)?.size ?? 0;
  }
}
