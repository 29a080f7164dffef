import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { CommitScope, withCommitScope } from '../../src/db/index.js';
import { fieldsDigest } from '../../src/modules/audit/index.js';
import { DIALECTS, SharedDatabase, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { DELETED_REASON, deleteAuditRow, restartAuditChain } from './audit.fixtures.js';

/**
 * No audit row is lost on a crash (issue 33): an audited change and its row commit in one transaction
 * (db/commit-appendix.ts): chained at once on SQLite; on PostgreSQL appended to `audit_pending` and
 * chained by the sealer afterwards. The chain stays one chain when two instances append and seal at
 * once, and `verify` names edits of sealed and of pending rows, and pending rows deleted before sealing.
 */
describe.each(DIALECTS)('audit rows commit with their action (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  /** The last chained row's id now: `appended(since)` lists what came after it. */
  const mark = async () => Number((await t.container.db.selectFrom('audit_log').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())?.id ?? 0);
  /** The rows appended since `mark()`: chained (SQLite chains at append) or pending (PostgreSQL). */
  const appendedRows = async (since: number) => [
    ...(await t.container.db.selectFrom('audit_log').select(['action', 'detail']).where('id', '>', since).orderBy('id').execute()),
    ...(await t.container.db.selectFrom('audit_pending').select(['action', 'detail']).orderBy('id').execute()),
  ];
  const appended = async (since: number) => (await appendedRows(since)).map((row) => row.action);
  const webhookUrls = async () => (await t.container.db.selectFrom('webhooks').select('url').where('base_id', '=', base.id).execute()).map((row) => row.url);
  const entry = (action: string) => ({ action, actor: 'test', ip: '::1', target: 'x' });

  beforeAll(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await createUser(t, { email: 'owner@example.com' });
    base = await createBase(t, owner, 'Durable');
  });
  afterAll(() => t.close());

  it('a scope’s row rolls back with a failed transaction and commits with the first one that writes', async () => {
    const { db, audit } = t.container;
    await audit.seal();
    const since = await mark();
    const scope = new CommitScope();
    scope.appendix = audit.appendix(async () => entry('test.scoped'));
    await withCommitScope(scope, async () => {
      // A transaction that fails after writing: neither its change nor the row stays.
      await expect(
        db.transaction().execute(async (trx) => {
          await trx.insertInto('workspaces').values({ owner_id: owner.id, type: 'rolled-back', created_at: 0 }).execute();
          throw new Error('the action fails');
        }),
      ).rejects.toThrow('the action fails');
      expect(scope.written).toBe(false);
      expect(await appended(since)).toEqual([]);
      expect(await db.selectFrom('workspaces').select('id').where('type', '=', 'rolled-back').execute()).toEqual([]);
      // A transaction that only reads does not carry the row.
      await db.transaction().execute((trx) => trx.selectFrom('users').select('id').execute());
      expect(await appended(since)).toEqual([]);
      // The first that writes does, once; a later one adds nothing.
      await db.transaction().execute((trx) => trx.updateTable('users').set({ name: 'Owner' }).where('id', '=', owner.id).execute());
      expect(scope.written).toBe(true);
      await db.transaction().execute((trx) => trx.updateTable('users').set({ name: 'Owner 2' }).where('id', '=', owner.id).execute());
    });
    expect(await appended(since)).toEqual(['test.scoped']);
  });

  // (PostgreSQL names an inserted row's id only when asked: RETURNING, as the services do.)
  it('a lone write statement in a scope commits in one transaction with the row; a failed one leaves neither', async () => {
    const { db, audit } = t.container;
    await audit.seal();
    const since = await mark();
    const failing = new CommitScope();
    failing.appendix = audit.appendix(async () => entry('test.lone_failed'));
    await withCommitScope(failing, () => expect(db.insertInto('workspaces').values({ id: 1_000_000, owner_id: -1, type: 'lone-failed', created_at: 0 } as never).execute()).rejects.toThrow());
    expect(await appended(since)).toEqual([]);
    const scope = new CommitScope();
    scope.appendix = audit.appendix(async (tx) => ({ ...entry('test.lone'), after: { inserted: tx.insertedId('workspaces') } }));
    await withCommitScope(scope, () => db.insertInto('workspaces').values({ owner_id: owner.id, type: 'lone', created_at: 0 }).returning('id').execute());
    const workspace = await db.selectFrom('workspaces').select('id').where('type', '=', 'lone').executeTakeFirstOrThrow();
    const rows = await appendedRows(since);
    expect(rows.map((row) => [row.action, JSON.parse(row.detail)])).toEqual([['test.lone', { after: { inserted: workspace.id } }]]);
    if (dialect === 'postgres') {
      // A write sent as one statement of data-modifying CTEs (db/write-statement.ts, the rows writer on PostgreSQL) carries the row too.
      const one = new CommitScope();
      one.appendix = audit.appendix(async () => entry('test.one_statement'));
      await withCommitScope(one, () => sql`WITH w AS (INSERT INTO workspaces (owner_id, type, created_at) VALUES (${owner.id}, 'one-statement', 0) RETURNING id) SELECT id FROM w`.execute(db));
      expect(one.written).toBe(true);
      expect((await appendedRows(since)).map((row) => row.action)).toEqual(['test.lone', 'test.one_statement']);
    }
  });

  it('an audited HTTP change writes its row inside its own transaction: when the row cannot be written, the change does not happen', async () => {
    const { db, audit } = t.container;
    await audit.seal();
    const since = await mark();
    const record = vi.spyOn(audit, 'record');
    try {
      const created = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, payload: { url: 'http://127.0.0.1:9/durable' } });
      expect(created.statusCode, created.body).toBeLessThan(300);
      // Not appended after the handler: the row was already in the create's transaction.
      expect(record).not.toHaveBeenCalled();
      expect(await appended(since)).toEqual(['webhook.create']);
    } finally {
      record.mockRestore();
    }
    await audit.seal();
    const sinceCreate = await mark();
    // Without the table the row goes to, the create's transaction fails as a whole.
    const target = sql.table(dialect === 'postgres' ? 'audit_pending' : 'audit_log');
    const away = sql.table(dialect === 'postgres' ? 'audit_pending_away' : 'audit_log_away');
    await sql`ALTER TABLE ${target} RENAME TO ${away}`.execute(db);
    try {
      const refused = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, payload: { url: 'http://127.0.0.1:9/never' } });
      expect(refused.statusCode).toBeGreaterThanOrEqual(500);
    } finally {
      await sql`ALTER TABLE ${away} RENAME TO ${target}`.execute(db);
    }
    expect(await webhookUrls()).toEqual(['http://127.0.0.1:9/durable']);
    expect(await appended(sinceCreate)).toEqual([]);
    expect(await audit.verify()).toMatchObject({ ok: true, pending: 0 });
  });

  it('verify names an edit of a sealed row; and an edit of a pending row, also once it was sealed', async () => {
    const { db, audit } = t.container;
    await audit.record(entry('test.sealed_victim'));
    await audit.seal();
    const sealed = await db.selectFrom('audit_log').selectAll().where('action', '=', 'test.sealed_victim').executeTakeFirstOrThrow();
    await db.updateTable('audit_log').set({ ip: '10.9.9.9' }).where('id', '=', sealed.id).execute();
    expect((await audit.verify()).broken).toMatchObject({ seq: sealed.seq, reason: expect.stringContaining('was edited (its hash') });
    await db.updateTable('audit_log').set({ ip: '::1' }).where('id', '=', sealed.id).execute();
    expect(await audit.verify()).toMatchObject({ ok: true, pending: 0 });

    // A row edited before it is sealed: named while pending, and still after the sealer chained it.
    // (Appended as an instance that stopped right after its commit leaves it: no seal is scheduled.)
    const fields = { created_at: t.clock.now(), action: 'test.pending_victim', actor: 'test', ip: '::1', base_id: null, target: 'x', detail: '{}' };
    const { id } = await db.insertInto('audit_pending').values({ ...fields, digest: fieldsDigest(fields) }).returning('id').executeTakeFirstOrThrow();
    // The seal timer of the first append is void: the seal above covered it (else it sealed this row meanwhile).
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await audit.verify()).toMatchObject({ ok: true, pending: 1 });
    await db.updateTable('audit_pending').set({ actor: 'someone-else' }).where('id', '=', id).execute();
    const edited = await audit.verify();
    expect(edited).toMatchObject({ ok: false, broken: { seq: null, id } });
    expect(edited.broken!.reason).toContain('not yet sealed');
    await audit.seal(); // (or a seal timer of an earlier append already did)
    const chained = await db.selectFrom('audit_log').selectAll().where('action', '=', 'test.pending_victim').executeTakeFirstOrThrow();
    const after = await audit.verify();
    expect(after).toMatchObject({ ok: false, broken: { seq: chained.seq } });
    expect(after.broken!.reason).toContain('before it was sealed');
  });


  it('verify names a row deleted right after its append, before and after the sealer ran', async () => {
    const { audit } = t.container;
    await restartAuditChain(t);
    await audit.record(entry('test.before'));
    await audit.record(entry('test.victim'));
    await audit.record(entry('test.after'));
    const where = await deleteAuditRow(t, 'test.victim');
    expect(dialect === 'sqlite' ? where : 'chained').toBe('chained');
    const before = await audit.verify();
    expect(before).toMatchObject({ ok: false });
    // (A pending row's deletion is named by its missing count, or, once a seal timer ran, by the sealer's marker.)
    expect(before.broken!.reason).toMatch(DELETED_REASON[where]);
    await audit.seal();
    const after = await audit.verify();
    expect(after).toMatchObject({ ok: false });
    expect(after.broken!.reason).toMatch(where === 'pending' ? /deleted before they were sealed/ : /missing \(deleted\)/);
  });

  it('verify names the last row deleted right after its append (no later row shows a gap)', async () => {
    const { audit } = t.container;
    await restartAuditChain(t);
    await audit.record(entry('test.kept'));
    await audit.record(entry('test.tail'));
    await deleteAuditRow(t, 'test.tail');
    expect((await audit.verify()).broken?.reason).toMatch(/missing.*deleted/);
    await audit.seal();
    expect((await audit.verify()).broken?.reason).toMatch(/missing.*deleted/);
  });
});

describe.each(DIALECTS)('audit writers’ counts are pruned (%s)', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('drops, in batches, the counts of writers whose appends are all sealed; keeps those with pending rows; a pruned writer that appends again starts over', async () => {
    const { db, audit } = t.container;
    // 2,500 stopped instances, all sealed (one row per process start), and one whose last two appends are still pending.
    // (Nothing was appended by this app yet, so no seal is due meanwhile.)
    for (let i = 0; i < 2500; i += 500) {
      await db.insertInto('audit_writers').values(Array.from({ length: 500 }, (_, j) => ({ id: `stopped-${i + j}`, appended: 3, sealed: 3 }))).execute();
    }
    await db.insertInto('audit_writers').values({ id: 'pending-writer', appended: 5, sealed: 3 }).execute();
    for (const n of [4, 5]) {
      const fields = { created_at: t.clock.now(), action: `test.pending_${n}`, actor: 'test', ip: '::1', base_id: null, target: 'x', detail: '{}' };
      await db.insertInto('audit_pending').values({ ...fields, digest: fieldsDigest(fields), writer: 'pending-writer', writer_seq: n }).execute();
    }
    expect(await audit.pruneWriters()).toBe(2500);
    expect((await db.selectFrom('audit_writers').select('id').execute()).map((w) => w.id)).toEqual(['pending-writer']);
    expect(await audit.verify()).toMatchObject({ ok: true, pending: 2 });
    // Once its rows are sealed it goes too (the daily prune tick); this instance's own count stays.
    await audit.seal();
    await audit.record({ action: 'test.live', actor: 'test', ip: '::1', target: 'x' });
    await audit.seal();
    const own = (await db.selectFrom('audit_writers').select('id').where('id', '<>', 'pending-writer').execute()).map((w) => w.id);
    expect(own).toHaveLength(dialect === 'postgres' ? 1 : 0); // PostgreSQL appends count; SQLite chains at once
    expect(await audit.prune(t.clock.now())).toBe(0);
    expect((await db.selectFrom('audit_writers').select('id').execute()).map((w) => w.id)).toEqual(own);
    // A running writer whose row another instance pruned appends again from a new count: no gap is seen.
    await db.deleteFrom('audit_writers').execute();
    await audit.record({ action: 'test.again', actor: 'test', ip: '::1', target: 'x' });
    await audit.record({ action: 'test.again', actor: 'test', ip: '::1', target: 'x' });
    if (dialect === 'postgres') expect((await db.selectFrom('audit_writers').select('appended').execute()).map((w) => Number(w.appended))).toEqual([2]);
    expect(await audit.verify()).toMatchObject({ ok: true });
    await audit.seal();
    expect(await audit.verify()).toMatchObject({ ok: true, pending: 0 });
    expect(await db.selectFrom('audit_log').select('id').where('action', '=', 'audit.pending_missing').execute()).toEqual([]);
  });
});

describe.each(DIALECTS)('audit sealing by several instances (%s)', (dialect) => {
  const shared = new SharedDatabase(dialect);
  let first: TestApp;
  let second: TestApp;

  beforeAll(async () => {
    first = await createTestApp(dialect, {}, { database: await shared.open() });
    second = await createTestApp(dialect, {}, { database: await shared.open() });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await shared.dispose();
  });

  it('keeps one chain when two instances append and seal at once', async () => {
    const appends = (t: TestApp, name: string) =>
      Promise.all(Array.from({ length: 300 }, (_, i) => t.container.audit.record({ action: 'test.parallel', actor: `${name}${i}`, ip: '::1', target: name })));
    await Promise.all([appends(first, 'a'), appends(second, 'b')]);
    // Both instances' timers seal while the appends go on; then both seal at once, twice.
    await Promise.all([first.container.audit.seal(), second.container.audit.seal(), first.container.audit.seal(), second.container.audit.seal()]);
    const rows = await first.container.db.selectFrom('audit_log').select(['seq', 'actor']).orderBy('seq').execute();
    expect(rows.map((row) => row.seq)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
    expect(new Set(rows.map((row) => row.actor)).size).toBe(600);
    expect(await second.container.audit.verify()).toEqual({ ok: true, rows: 600, pending: 0 });
  }, 60_000);
});
