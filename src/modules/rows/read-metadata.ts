import type { Executor } from '../../db/index.js';
import { notFound } from '../../shared/errors.js';
import type { BaseRef } from './base-writer.js';
import type { BaseMetadata } from './metadata.js';

/** Bases whose parsed metadata is kept for reads (least recently used out first). */
const KEPT_BASES = 256;

/**
 * The metadata document for READS (row listings, the whole-base read), parsed once per version: a read
 * asks the database only for the version (every change of the document stores it under the next
 * version, metadata.repository.ts) and reuses the document parsed at that version. The kept documents
 * are deeply frozen, so a read path that tried to change one would fail loudly instead of corrupting
 * later reads; writes never see them (they load and lock the document themselves).
 */
export class ReadMetadata {
  private readonly kept = new Map<number, { uuid: string; meta: BaseMetadata }>();
  private readonly readVersion: (baseId: number) => Promise<number | undefined>;

  constructor(
    db: Executor,
    private readonly load: (base: BaseRef) => Promise<BaseMetadata>,
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
    this.kept.delete(base.id);
    this.kept.set(base.id, { uuid: base.uuid, meta });
    if (this.kept.size > KEPT_BASES) this.kept.delete(this.kept.keys().next().value!);
    return meta;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
