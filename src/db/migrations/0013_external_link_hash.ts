import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';

/**
 * External-link tokens stored hashed, like API-Tokens (issue 17): `external_links.token` now holds
 * the SHA-256 (hex) of the token, and `token_hint` its last four characters for listings. A database
 * copy no longer opens every public link. Existing rows are converted in place; links keep working
 * because lookups hash the presented token.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('external_links').addColumn('token_hint', 'varchar(8)', (c) => c.notNull().defaultTo('')).execute();
  const rows = await db.selectFrom('external_links').select(['id', 'token']).execute();
  for (const row of rows as Array<{ id: number | string; token: string }>) {
    await db
      .updateTable('external_links')
      .set({ token: createHash('sha256').update(row.token).digest('hex'), token_hint: row.token.slice(-4) })
      .where('id', '=', row.id)
      .execute();
  }
}

/** Irreversible: the clear tokens are gone. Only the hint column is dropped. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('external_links').dropColumn('token_hint').execute();
}
