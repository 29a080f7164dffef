import { sql } from 'kysely';
import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound, permissionDenied } from '../../shared/errors.js';
import { newBaseUuid, parsePositiveId } from '../../shared/ids.js';
import type { AccountUser } from '../accounts/index.js';
import type { BaseAccess } from './base-access.js';
import * as repo from './workspaces.repository.js';
import type { BaseListing } from './workspaces.repository.js';

type Body = Record<string, unknown>;

function workspaceId(value: unknown, field: string): number {
  const id = parsePositiveId(value);
  if (id === null) throw badRequest(`${field} invalid.`);
  return id;
}

/**
 * `POST /api/v2.1/dtable-copy/`: a copy of a base the caller can read, in a workspace the caller owns,
 * under the same name. Structure, rows and links are copied (row and link ids kept: they are unique per
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
    const target = await repo.findWorkspace(this.db, dstWorkspace);
    if (!target) throw notFound(`Workspace ${dstWorkspace} not found.`);
    if (target.owner_id !== user.id) throw permissionDenied();
    const now = this.clock.now();
    try {
      // Repeatable read (PostgreSQL): metadata, rows and links from one snapshot of the source.
      await this.db
        .transaction()
        .setIsolationLevel('repeatable read')
        .execute(async (trx) => {
          const meta = await trx.selectFrom('base_metadata').select(['data']).where('base_id', '=', source.id).executeTakeFirst();
          if (!meta) throw notFound(`dtable ${source.name} not found.`);
          const copy = await repo.insertBase(trx, {
            uuid: newBaseUuid(),
            workspace_id: target.id,
            name: source.name,
            creator_id: user.id,
            modifier_id: user.id,
            created_at: now,
            updated_at: now,
          });
          const data = typeof meta.data === 'string' ? meta.data : JSON.stringify(meta.data);
          await repo.insertMetadata(trx, copy.id, data);
          await sql`insert into base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier)
            select ${copy.id}, table_id, row_id, data, ctime, mtime, creator, last_modifier
            from base_rows where base_id = ${source.id} order by id`.execute(trx);
          await sql`insert into base_links (base_id, link_id, row_id, other_row_id, ctime)
            select ${copy.id}, link_id, row_id, other_row_id, ctime
            from base_links where base_id = ${source.id} order by id`.execute(trx);
        });
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict(`Table ${source.name} already exists.`);
      throw error;
    }
    const created = await repo.findBase(this.db, target.id, source.name);
    if (!created) throw new Error('copied base vanished after write');
    return { source, created };
  }
}
