import type { Executor } from '../../db/index.js';
import { membersOf, metadataTexts } from './base-context.repository.js';
import { parseMetaDoc, type MetaDoc } from './metadata-doc.js';
import type { Member } from './rules.model.js';

/** What rules of one base are checked and evaluated against. */
export interface BaseContext {
  doc: MetaDoc;
  /** `base_metadata.version` of `doc`. */
  version: number;
  /** Active users with access, by virtual id (those with view shares only carry their views). */
  members: Map<string, Member>;
}

/** Loads metadata and members of several bases with two queries each kind. */
export async function loadBaseContexts(db: Executor, baseIds: number[]): Promise<Map<number, BaseContext>> {
  const ids = [...new Set(baseIds)];
  const [texts, members] = await Promise.all([metadataTexts(db, ids), membersOf(db, ids)]);
  const out = new Map<number, BaseContext>();
  for (const id of ids) {
    const meta = texts.get(id);
    out.set(id, { doc: parseMetaDoc(meta?.data), version: meta?.version ?? 0, members: new Map() });
  }
  for (const m of members) out.get(m.base_id)?.members.set(m.virtual_id, { userId: m.user_id, name: m.name, ...(m.views ? { views: m.views } : {}) });
  return out;
}

export async function loadBaseContext(db: Executor, baseId: number): Promise<BaseContext> {
  return (await loadBaseContexts(db, [baseId])).get(baseId)!;
}

/** Nickname lookup for templating: members by virtual id; anything else is shown as it is. */
export function nameLookup(members: ReadonlyMap<string, Member>): (virtualId: string) => string {
  return (id) => members.get(id)?.name ?? id;
}
