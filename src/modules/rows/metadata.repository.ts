import { sql, type RawBuilder } from 'kysely';
import { baseRevisionSql, type DialectName, type Executor, type SharedGate } from '../../db/index.js';
import { notFound } from '../../shared/errors.js';
import { parseMetadata, type BaseMetadata } from './metadata.js';
import { checkedMetadataJson } from './size-limits.js';

export interface StoredMetadata {
  version: number;
  data: string;
}

/**
 * The stored text each loaded document was parsed from: a write diffs the structure it changed
 * against the document as read (`metadataAsRead`), and parsing that again only for the writes that
 * changed it is far cheaper than cloning the document on every write.
 */
const readFrom = new WeakMap<BaseMetadata, StoredMetadata>();

function parseStored(row: StoredMetadata): BaseMetadata {
  const meta = parseMetadata(row.data);
  meta.version = row.version;
  readFrom.set(meta, row);
  return meta;
}

/**
 * A fresh copy of `meta` as `loadMetadata`/`lockMetadata` read it, whatever was changed in `meta`
 * since. Throws for a document that did not come from them.
 */
export function metadataAsRead(meta: BaseMetadata): BaseMetadata {
  const row = readFrom.get(meta);
  if (!row) throw new Error('metadataAsRead: this metadata was not loaded from the database');
  return parseStored(row);
}

/** The stored version and text `meta` was parsed from (undefined for a document not loaded here). */
export function storedFrom(meta: BaseMetadata): StoredMetadata | undefined {
  return readFrom.get(meta);
}

/** A fresh document parsed from a stored version and text (as `loadMetadata` would return it). */
export function metadataFrom(stored: StoredMetadata): BaseMetadata {
  return parseStored(stored);
}

/** The base's metadata document (tables, columns, views). */
export async function loadMetadata(db: Executor, baseId: number): Promise<BaseMetadata> {
  const row = await db.selectFrom('base_metadata').select(['version', 'data']).where('base_id', '=', baseId).executeTakeFirst();
  if (!row) throw notFound('dtable not found.');
  return parseStored(row);
}

/**
 * The metadata, locked until the transaction ends: every write to a base (rows, links, structure)
 * takes this lock first, so writes to one base are serialized (PostgreSQL `FOR UPDATE`; SQLite has one writer).
 */
export async function lockMetadata(trx: Executor, dialect: DialectName, baseId: number): Promise<BaseMetadata> {
  let query = trx.selectFrom('base_metadata').select(['version', 'data']).where('base_id', '=', baseId);
  if (dialect === 'postgres') query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) throw notFound('dtable not found.');
  return parseStored(row);
}

/**
 * Ends a write to the base: the next revision (every write bumps it), and a changed document stored
 * under the next version when given. Runs inside the write's transaction.
 */
export async function saveRevision(trx: Executor, baseId: number, changed: BaseMetadata | null): Promise<void> {
  let update = trx.updateTable('base_metadata').set((eb) => ({ revision: eb('revision', '+', 1) }));
  if (changed) {
    changed.version += 1;
    update = update.set({ version: changed.version, data: checkedMetadataJson(changed) });
  }
  await update.where('base_id', '=', baseId).execute();
}

/**
 * The late lock of a write (PostgreSQL): bump the revision, which takes the metadata row's lock, and
 * return the version it is at, in one statement. Undefined when the base is gone.
 */
export async function lockByRevision(trx: Executor, baseId: number): Promise<number | undefined> {
  const row = await trx
    .updateTable('base_metadata')
    .set((eb) => ({ revision: eb('revision', '+', 1) }))
    .where('base_id', '=', baseId)
    .returning('version')
    .executeTakeFirst();
  return row === undefined ? undefined : Number(row.version);
}

/**
 * The revision bump as the gate of a write's one statement (WriteStatement): one row when the base is
 * there (and, given `version`, still at that version), none otherwise. It takes the metadata row's lock.
 */
export function revisionBump(baseId: number, version?: number): RawBuilder<unknown> {
  const at = version === undefined ? sql`` : sql` AND version = ${version}`;
  return sql`UPDATE base_metadata SET revision = revision + 1 WHERE base_id = ${baseId}${at} RETURNING version`;
}

/**
 * The gate of a concurrent append's statement (PostgreSQL, PG_CONCURRENT_APPENDS): the metadata row
 * `FOR KEY SHARE` at `version` (appends share it; a serialized writer's `FOR UPDATE` waits for them
 * and they for it), then 1 added to one of the base's 16 revision stripes (by the backend's pid, so
 * appends on different connections rarely meet on a stripe's row lock) instead of the revision bump,
 * whose row lock and trigger notify would put every commit in series. One row when it passed.
 */
export function concurrentAppendGate(baseId: number, version: number): SharedGate {
  return {
    before: sql`append_gate AS (SELECT base_id FROM base_metadata WHERE base_id = ${baseId} AND version = ${version} FOR KEY SHARE),
    append_stripe AS (INSERT INTO base_revision_stripes (base_id, stripe, n) SELECT base_id, pg_backend_pid() % 16, 1 FROM append_gate
      ON CONFLICT (base_id, stripe) DO UPDATE SET n = base_revision_stripes.n + 1 RETURNING base_id)`,
    body: sql`SELECT base_id FROM append_stripe`,
  };
}

/**
 * Tells other instances (their read caches, db/revision-channel.ts) that concurrent appends of the
 * base committed: the notification migration 0016's trigger sends for serialized writers, sent after
 * the commit in a transaction of its own that writes nothing (so it holds PostgreSQL's notify lock only
 * for a moment), before the appends are answered.
 */
export async function announceRevision(db: Executor, baseId: number): Promise<void> {
  await sql`SELECT pg_notify('basegate_revision', current_schema() || ':' || ${String(baseId)})`.execute(db);
}

/** Store a changed document under the next version (the row is already locked by this transaction). */
export async function storeMetadata(trx: Executor, baseId: number, changed: BaseMetadata): Promise<void> {
  changed.version += 1;
  await trx.updateTable('base_metadata').set({ version: changed.version, data: checkedMetadataJson(changed) }).where('base_id', '=', baseId).execute();
}

/**
 * Reads a base's current revision (undefined when the base is gone). The query is compiled once:
 * it runs on every whole-base read, and building it each time would cost more than running it.
 */
export function revisionReader(db: Executor): (baseId: number) => Promise<number | undefined> {
  const compiled = db.selectFrom('base_metadata').select(baseRevisionSql(db).as('revision')).where('base_id', '=', 0).compile();
  return async (baseId) => {
    const query: typeof compiled = { ...compiled, parameters: [baseId] };
    const [row] = (await db.executeQuery(query)).rows;
    return row === undefined ? undefined : Number(row.revision);
  };
}
