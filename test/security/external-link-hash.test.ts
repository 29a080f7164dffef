import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { sha256Hex } from '../../src/shared/crypto.js';
import { migrations } from '../../src/db/migrations/index.js';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('external-link tokens stored hashed (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
  });
  afterAll(() => t.close());

  const exchange = (token: string) => t.request({ method: 'GET', url: `/api/v2.1/external-link-tokens/${token}/access-token/` });

  it('keeps only the SHA-256 and the last four characters; the token still opens the base, its hash does not', async () => {
    const base = await createBase(t, owner);
    for (const payload of [{}, { token: 'custom-link-name' }]) {
      const created = await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload });
      expect(created.statusCode).toBe(200);
      const token = created.json<{ token: string }>().token;
      const rows = await t.container.db.selectFrom('external_links').selectAll().where('base_id', '=', base.id).execute();
      const dump = JSON.stringify(rows);
      expect(dump).not.toContain(token);
      expect(rows.map((r) => r.token)).toContain(sha256Hex(token));
      expect(rows.map((r) => r.token_hint)).toContain(token.slice(-4));

      expect((await exchange(token)).statusCode).toBe(200);
      expect((await exchange(sha256Hex(token))).statusCode).toBe(404);
    }
    // Deleting by the token still works; by the stored hash it does not.
    const random = await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token });
    const token = random.json<{ token: string }>().token;
    const byHash = await t.request({ method: 'DELETE', url: basePath(base, `external-links/${sha256Hex(token)}/`), token: owner.token });
    expect(byHash.statusCode).toBe(404);
    const del = await t.request({ method: 'DELETE', url: basePath(base, `external-links/${token}/`), token: owner.token });
    expect(del.statusCode).toBe(200);
    expect((await exchange(token)).statusCode).toBe(404);
  });

  it('migration 0013 hashes the tokens of existing links in place, and they keep working', async () => {
    // A database as it was before 0013: links with clear tokens and no hint column.
    const old = await createTestApp(dialect);
    try {
      const user = await createUser(old);
      const base = await createBase(old, user);
      await sql`alter table external_links drop column token_hint`.execute(old.container.db);
      const legacy = ['legacy0123456789abcd', 'my-custom-legacy'];
      for (const [i, token] of legacy.entries()) {
        await sql`insert into external_links (base_id, token, is_custom, password_hash, expire_at, creator_id, created_at)
                  values (${base.id}, ${token}, ${i}, null, null, ${user.id}, ${old.clock.now()})`.execute(old.container.db);
      }
      await migrations['0013_external_link_hash']!.up(old.container.db);

      const rows = await old.container.db.selectFrom('external_links').selectAll().orderBy('id').execute();
      expect(rows.map((r) => [r.token, r.token_hint])).toEqual(legacy.map((token) => [sha256Hex(token), token.slice(-4)]));
      for (const token of legacy) {
        const res = await old.request({ method: 'GET', url: `/api/v2.1/external-link-tokens/${token}/access-token/` });
        expect(res.statusCode, token).toBe(200);
      }
    } finally {
      await old.close();
    }
  });
});
