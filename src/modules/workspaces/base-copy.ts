import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { isForeignKeyViolation, isSerializationFailure, isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound, permissionDenied } from '../../shared/errors.js';
import { newBaseUuid, parsePositiveId } from '../../shared/ids.js';
import type { AccountUser } from '../accounts/index.js';
import { type BaseAccess, type BaseListing } from '../access/index.js';
import * as repo from './workspaces.repository.js';
import { storedIdsOf, type BaseMetadata } from '../rows/index.js';

type Body = Record<string, unknown>;

function workspaceId(value: unknown, field: string): number {
  const id = parsePositiveId(value);
  if (id === null) throw badRequest(`${field} invalid.`);
  return id;
}

/**
 * `POST /api/v2.1/dtable-copy/`: a copy of a base the caller can read, in a workspace the caller owns,
 * under the same name or, when that is taken there, the first free `Name (k)`. Structure, rows and links are copied (row and link ids kept: they are unique per
 * base); API-Tokens, shares, external links, webhooks and rules are not.
 */
export class BaseCopyService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
  ) {}

  /** Copies the base; returns the source and the copy. */
  async copy(user: AccountUser, body: Body): Promise<{ source: BaseListing; created: BaseListing }> {
    const srcWorkspace = workspaceId(body.src_workspace_id, 'src_workspace_id');
    const dstWorkspace = workspaceId(body.dst_workspace_id, 'dst_workspace_id');
    if (typeof body.name !== 'string' || body.name.trim() === '') throw badRequest('name invalid.');
    const { base: source } = await this.access.resolve(user, srcWorkspace, body.name, 'r');
    const target = await this.access.findWorkspace(dstWorkspace);
    if (!target) throw notFound(`Workspace ${dstWorkspace} not found.`);
    if (!(await this.access.mayCreateIn(target, user.id))) throw permissionDenied();
    const now = this.clock.now();
    // The copy takes the first free name of `Name`, `Name (1)`, `Name (2)` … in the target workspace, as a
    // person duplicating a base in place expects; a name taken meanwhile by another request is tried again.
    for (let attempt = 1; ; attempt++) {
      const name = freeName(source.name, new Set((await repo.listWorkspaceBases(this.db, target.id)).map((b) => b.name)));
      try {
        await this.write(source, target.id, name, user.id, now);
      } catch (error) {
        // The target workspace went meanwhile (its group, or its owner, deleted): a foreign-key violation,
        // or on PostgreSQL, under repeatable read, a serialization failure.
        if (isForeignKeyViolation(error) || !(await this.access.findWorkspace(dstWorkspace))) throw notFound(`Workspace ${dstWorkspace} not found.`);
        // A concurrent write to a row the copy's foreign keys lock (the workspace, the user) ends a
        // repeatable-read transaction: the copy is run again on a new snapshot.
        if (isSerializationFailure(error) && attempt < COPY_SERIALIZATION_ATTEMPTS) continue;
        if (!isUniqueViolation(error)) throw error;
        if (attempt >= COPY_NAME_ATTEMPTS) throw conflict(`Table ${name} already exists.`);
        continue;
      }
      const created = await this.access.findInWorkspace(target.id, name);
      if (!created) throw new Error('copied base vanished after write');
      return { source, created };
    }
  }

  /** The copy under `name`, in one transaction (repeatable read on PostgreSQL: one snapshot of the source). */
  private async write(source: BaseListing, workspaceId: number, name: string, userId: number, now: number): Promise<void> {
    await this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const meta = await trx.selectFrom('base_metadata').select(['data']).where('base_id', '=', source.id).executeTakeFirst();
        if (!meta) throw notFound(`dtable ${source.name} not found.`);
        const copy = await repo.insertBase(trx, {
          uuid: newBaseUuid(),
          workspace_id: workspaceId,
          name,
          creator_id: userId,
          modifier_id: userId,
          created_at: now,
          updated_at: now,
        });
        const data = typeof meta.data === 'string' ? meta.data : JSON.stringify(meta.data);
        await repo.insertMetadata(trx, copy.id, data);
        // Only the metadata's tables and link columns: a trashed table's kept rows and links stay with the source.
        const { tableIds, linkIds } = storedIdsOf(JSON.parse(data) as BaseMetadata);
        if (tableIds.length > 0) {
          await sql`insert into base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier)
            select ${copy.id}, table_id, row_id, data, ctime, mtime, creator, last_modifier
            from base_rows where base_id = ${source.id} and table_id in (${sql.join(tableIds)}) order by id`.execute(trx);
        }
        if (linkIds.length > 0) {
          await sql`insert into base_links (base_id, link_id, row_id, other_row_id, ctime)
            select ${copy.id}, link_id, row_id, other_row_id, ctime
            from base_links where base_id = ${source.id} and link_id in (${sql.join(linkIds)}) order by id`.execute(trx);
        }
      });
  }
}

const COPY_NAME_ATTEMPTS = 3;
const COPY_SERIALIZATION_ATTEMPTS = 5;
const MAX_NAME_LENGTH = 255;

/** `name` when free, else `name (k)` with the smallest free k (the name shortened to stay within 255 characters). */
export function freeName(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  for (let k = 1; ; k++) {
    const suffix = ` (${k})`;
    const candidate = [...name].slice(0, MAX_NAME_LENGTH - suffix.length).join('') + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}
