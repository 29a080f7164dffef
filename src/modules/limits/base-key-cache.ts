import type { Clock } from '../../shared/clock.js';
import type { BaseAccess } from '../access/index.js';
import type { WorkspaceBaseRef } from './limit-policy.js';

export const BASE_KEY_TTL_MS = 30_000;
export const MISSING_BASE_TTL_MS = 5_000;
export const BASE_KEY_CACHE_SIZE = 10_000;

interface Entry {
  uuid: string | null;
  expiresAt: number;
}

/**
 * Maps `{workspace_id}/dtable/{base_name}` to the base's uuid so such requests count against the
 * same budget as requests naming the uuid, without a database read per request. Keying by the
 * uuid (not the name) means a rename neither resets nor splits the budget. An entry lives
 * BASE_KEY_TTL_MS, so after a rename the old name still counts against the renamed base for at
 * most that long; an unknown name is remembered as unknown (counted per IP) for MISSING_BASE_TTL_MS.
 */
export class BaseKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<string | null>>();

  constructor(
    private readonly access: BaseAccess,
    private readonly clock: Clock,
    private readonly maxEntries: number = BASE_KEY_CACHE_SIZE,
  ) {}

  /** The base uuid, or null when no such base exists (or the lookup failed). */
  uuidOf(ref: WorkspaceBaseRef): string | null | Promise<string | null> {
    const key = `${ref.workspaceId}/${ref.baseName}`;
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > this.clock.now()) return hit.uuid;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const lookup = this.lookup(ref).then((uuid) => {
      this.remember(key, uuid);
      this.inFlight.delete(key);
      return uuid;
    });
    this.inFlight.set(key, lookup);
    return lookup;
  }

  /**
   * Whether the user has any access to the base (owner or a share). A caller without access must not
   * spend the base's budget (issue 17): such requests count per IP. Lookup errors count as no access.
   */
  async canUse(uuid: string, userId: number): Promise<boolean> {
    try {
      const base = await this.access.findByUuid(uuid);
      return base !== undefined && (await this.access.permissionOf(base, userId)) !== 'none';
    } catch {
      return false;
    }
  }

  private async lookup(ref: WorkspaceBaseRef): Promise<string | null> {
    try {
      return (await this.access.find(ref.workspaceId, ref.baseName)).uuid;
    } catch {
      // Unknown workspace or base (the route answers 404), or database trouble (the route fails
      // too): either way the request counts per IP rather than failing here.
      return null;
    }
  }

  private remember(key: string, uuid: string | null): void {
    this.entries.delete(key);
    // Bounded: drop the oldest entry (Map keeps insertion order) when full.
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { uuid, expiresAt: this.clock.now() + (uuid ? BASE_KEY_TTL_MS : MISSING_BASE_TTL_MS) });
  }
}
