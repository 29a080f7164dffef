import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { isForeignKeyViolation, type Executor } from '../../db/index.js';
import type { ApiTokensTable } from './tokens.table.js';

export type ApiTokenRow = Selectable<ApiTokensTable>;

/**
 * An API-Token with what issuing a Base-Token from it needs: its base, and its revocation version
 * read in the same statement, so a token and its version always come from one snapshot (a token
 * seen here cannot carry a version bumped by its own deletion or permission change).
 */
export interface ApiTokenWithBase extends ApiTokenRow {
  base_uuid: string;
  base_name: string;
  workspace_id: number;
  owner_virtual_id: string;
  version: number;
  /** Which secret was presented: the current one, or the one a rotation replaced (valid until `previous_expires_at`). */
  matched: 'current' | 'previous';
}

export function listApiTokens(db: Executor, baseId: number): Promise<ApiTokenRow[]> {
  return db.selectFrom('api_tokens').selectAll().where('base_id', '=', baseId).orderBy('id').execute();
}

export function findApiToken(db: Executor, baseId: number, appName: string): Promise<ApiTokenRow | undefined> {
  return db.selectFrom('api_tokens').selectAll().where('base_id', '=', baseId).where('app_name', '=', appName).executeTakeFirst();
}

/** The token presented as a credential, by the SHA-256 of its text, in one query (hot path). */
export async function findApiTokenByHash(db: Executor, tokenHash: string, versionKeyPrefix: string): Promise<ApiTokenWithBase | undefined> {
  const row = await db
    .selectFrom('api_tokens')
    .innerJoin('bases', 'bases.id', 'api_tokens.base_id')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .innerJoin('users as owner', 'owner.id', 'workspaces.owner_id')
    .leftJoin('credential_versions as cv', (join) =>
      join.on((eb) => eb('cv.credential', '=', sql<string>`${sql.lit(versionKeyPrefix)} || ${sql.ref('api_tokens.id')}`)),
    )
    .selectAll('api_tokens')
    .select([
      'bases.uuid as base_uuid',
      'bases.name as base_name',
      'bases.workspace_id',
      'owner.virtual_id as owner_virtual_id',
      sql<number>`coalesce(${sql.ref('cv.version')}, 0)`.as('version'),
    ])
    .where((eb) => eb.or([eb('api_tokens.token_hash', '=', tokenHash), eb('api_tokens.previous_token_hash', '=', tokenHash)]))
    .where('bases.deleted_at', 'is', null)
    .executeTakeFirst();
  return row && { ...row, version: Number(row.version), matched: row.token_hash === tokenHash ? 'current' : 'previous' };
}

export async function insertApiToken(db: Executor, row: Insertable<ApiTokensTable>): Promise<ApiTokenRow> {
  return db.insertInto('api_tokens').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateApiTokenPermission(db: Executor, id: number, permission: string): Promise<void> {
  await db.updateTable('api_tokens').set({ permission }).where('id', '=', id).execute();
}

export async function deleteApiToken(db: Executor, id: number): Promise<boolean> {
  const result = await db.deleteFrom('api_tokens').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Moves `last_access` forward only (an older write arriving late never moves it back). */
export async function touchApiToken(db: Executor, id: number, at: number): Promise<void> {
  await db
    .updateTable('api_tokens')
    .set({ last_access: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_access', 'is', null), eb('last_access', '<', at)]))
    .execute();
}

export async function findCredentialVersion(db: Executor, credential: string): Promise<number> {
  const row = await db.selectFrom('credential_versions').select('version').where('credential', '=', credential).executeTakeFirst();
  return row ? Number(row.version) : 0;
}

/** Atomically increments a credential's version (creating it at 1) and returns the new value. */
export async function bumpCredentialVersion(db: Executor, credential: string): Promise<number> {
  const row = await db
    .insertInto('credential_versions')
    .values({ credential, version: 1 })
    .onConflict((oc) => oc.column('credential').doUpdateSet({ version: sql<number>`credential_versions.version + 1` }))
    .returning('version')
    .executeTakeFirstOrThrow();
  return Number(row.version);
}

export async function updateApiToken(db: Executor, id: number, values: Updateable<ApiTokensTable>): Promise<void> {
  await db.updateTable('api_tokens').set(values).where('id', '=', id).execute();
}

/** Adds a batch of request counts per (token, day) and the last client addresses. */
export async function addUsage(db: Executor, counts: Array<{ tokenId: number; day: string; requests: number }>, lastIps: Map<number, string>): Promise<void> {
  for (const c of counts) {
    await db
      .insertInto('api_token_usage')
      .values({ token_id: c.tokenId, day: c.day, requests: c.requests })
      .onConflict((oc) => oc.columns(['token_id', 'day']).doUpdateSet({ requests: sql<number>`api_token_usage.requests + ${c.requests}` }))
      .execute()
      .catch((error: unknown) => {
        // The token was deleted meanwhile (foreign key): its counts go with it.
        if (!isForeignKeyViolation(error)) throw error;
      });
  }
  for (const [tokenId, ip] of lastIps) await db.updateTable('api_tokens').set({ last_ip: ip }).where('id', '=', tokenId).execute();
}

/** Requests per day of the given tokens, newest days first, at most `days` per token. */
export async function usageOf(db: Executor, tokenIds: number[], sinceDay: string): Promise<Array<{ token_id: number; day: string; requests: number }>> {
  if (tokenIds.length === 0) return [];
  const rows = await db
    .selectFrom('api_token_usage')
    .select(['token_id', 'day', 'requests'])
    .where('token_id', 'in', tokenIds)
    .where('day', '>=', sinceDay)
    .orderBy('day', 'desc')
    .execute();
  return rows.map((r) => ({ token_id: Number(r.token_id), day: r.day, requests: Number(r.requests) }));
}
