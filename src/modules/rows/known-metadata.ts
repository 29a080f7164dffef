import type { BaseMetadata } from './metadata.js';
import { metadataFrom, storedFrom, type StoredMetadata } from './metadata.repository.js';

/** Characters of stored metadata text kept in all (a bound in bytes, not in bases). */
const MAX_CHARS = 16 * 1024 * 1024;

/**
 * The metadata of each base as a write of this process last read it (its stored version and text).
 * Never trusted: a write working on it is gated on that version in the database (BaseWriter's one
 * statement), so an entry gone stale costs one retry, never a wrong write.
 */
export class KnownMetadata {
  private readonly byBase = new Map<number, StoredMetadata>();
  private chars = 0;

  remember(baseId: number, meta: BaseMetadata): void {
    const stored = storedFrom(meta);
    if (stored === undefined) return;
    this.forget(baseId);
    if (stored.data.length > MAX_CHARS) return;
    if (this.chars + stored.data.length > MAX_CHARS) this.clear();
    this.byBase.set(baseId, stored);
    this.chars += stored.data.length;
  }

  /** A fresh copy to work on (the caller may change it), or undefined when none is known. */
  get(baseId: number): BaseMetadata | undefined {
    const stored = this.byBase.get(baseId);
    return stored === undefined ? undefined : metadataFrom(stored);
  }

  forget(baseId: number): void {
    const stored = this.byBase.get(baseId);
    if (stored === undefined) return;
    this.byBase.delete(baseId);
    this.chars -= stored.data.length;
  }

  /** Kept documents and the characters of their texts (metrics, tests). */
  get stats(): { bases: number; bytes: number } {
    return { bases: this.byBase.size, bytes: this.chars };
  }

  private clear(): void {
    this.byBase.clear();
    this.chars = 0;
  }
}
