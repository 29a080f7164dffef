import type { Executor } from '../../db/index.js';
import { notFound } from '../../shared/errors.js';
import type { BaseRef } from './base-writer.js';
import type { BaseMetadata } from './metadata.js';

/** Bases whose parsed metadata is kept for reads (least recently used out first). */
const KEPT_BASES = 256;

/** Bytes of parsed documents kept in all (estimated, see `parsedBytes`); a document above it is not kept. */
export const READ_METADATA_MAX_BYTES = 32 * 1024 * 1024;

/**
 * Heap bytes of a parsed document, estimated from its JSON text: measured at about one byte a character
 * for typical documents (repeated keys are shared), counted twice for headroom (and two-byte texts).
 */
function parsedBytes(meta: BaseMetadata): number {
  return 2 * JSON.stringify(meta).length;
}

/**
 * The metadata document for READS (row listings, the whole-base read), parsed once per version: a read
 * asks the database only for the version (every change of the document stores it under the next
 * version, metadata.repository.ts) and reuses the document parsed at that version. The kept documents
 * are deeply frozen, so a read path that tried to change one would fail loudly instead of corrupting
 * later reads; writes never see them (they load and lock the document themselves).
 */
export class ReadMetadata {
  private readonly kept = new Map<number, { uuid: string; meta: BaseMetadata; bytes: number }>();
  private bytes = 0;
  private readonly readVersion: (baseId: number) => Promise<number | undefined>;

  constructor(
    db: Executor,
    private readonly load: (base: BaseRef) => Promise<BaseMetadata>,
    private readonly maxBytes = READ_METADATA_MAX_BYTES,
  ) {
    const compiled = db.selectFrom('base_metadata').select('version').where('base_id', '=', 0).compile();
    this.readVersion = async (baseId) => {
      const query: typeof compiled = { ...compiled, parameters: [baseId] };
      const [row] = (await db.executeQuery(query)).rows;
      return row === undefined ? undefined : Number(row.version);
    };
  }

  async read(base: BaseRef): Promise<BaseMetadata> {
    const hit = this.kept.get(base.id);
    const version = await this.readVersion(base.id);
    if (version === undefined) throw notFound('dtable not found.');
    // The uuid too: SQLite may give a deleted base's id to a new base, whose document starts at version 1 again.
    if (hit && hit.uuid === base.uuid && hit.meta.version === version) {
      this.kept.delete(base.id);
      this.kept.set(base.id, hit);
      return hit.meta;
    }
    const meta = deepFreeze(await this.load(base));
    this.drop(base.id);
    const bytes = parsedBytes(meta);
    if (bytes > this.maxBytes) return meta;
    this.kept.set(base.id, { uuid: base.uuid, meta, bytes });
    this.bytes += bytes;
    for (const id of this.kept.keys()) {
      if (this.kept.size <= KEPT_BASES && this.bytes <= this.maxBytes) break;
      this.drop(id);
    }
    return meta;
  }

  /** Kept documents and their estimated bytes (metrics, tests). */
  get stats(): { bases: number; bytes: number } {
    return { bases: this.kept.size, bytes: this.bytes };
  }

  private drop(baseId: number): void {
    const entry = this.kept.get(baseId);
    if (!entry) return;
    this.kept.delete(baseId);
    this.bytes -= entry.bytes;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
