import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommitScope, withCommitScope } from '../../src/db/index.js';
import type { AuditEntry, AuditTxReader } from '../../src/modules/audit/index.js';
import { DIALECTS, type TestApp } from '../helpers/index.js';
import { DELETED_REASON, deleteAuditRow, editAuditRow, restartAuditChain } from './audit.fixtures.js';
import { appWithTable, appendRows, refuseEventsNamed, type Gateway } from './rows.fixtures.js';

/**
 * An audited append (a row write in a commit scope whose appendix is an audit row) on PostgreSQL
 * carries its audit row as two parts of its ONE statement (db/commit-appendix.ts `addTo`): the count in
 * the instance's `audit_writers` row and the pending row stamped with it, written only when the append
 * is. An appendix that must read goes with its append into a transaction instead. SQLite chains the row
 * in the append's transaction. Either way: exactly one chained row with the action's content, the
 * writers' counts all sealed, and `verify` names a deleted or edited row.
 */
describe.each(DIALECTS)('audited appends (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  const actor = { user: 'u@auth.local', app: null };
  const entry = (action: string, n: number): AuditEntry => ({ action, actor: 'api-token:7', ip: '10.0.0.7', target: `POST rows ${n}`, after: { n }, baseId: g.base.id });
  /** An append of one row named `name` in a commit scope whose appendix is the audit row `build` gives. */
  const auditedAppend = async (name: string, build: (tx: AuditTxReader) => Promise<AuditEntry>) => {
    const scope = new CommitScope();
    scope.appendix = t.container.audit.appendix(build);
    await withCommitScope(scope, () => t.container.baseData.rows.append(g.base, actor, { table_name: 'Table1', rows: [{ Name: name }] }));
    return scope;
  };
  const chained = async (action: string) => {
    await t.container.audit.seal();
    return t.container.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('seq').execute();
  };
  const writerCounts = async () => (await t.container.db.selectFrom('audit_writers').select(['appended', 'sealed']).execute()).map((w) => [Number(w.appended), Number(w.sealed)]);
  const stats = () => ({ ...t.container.baseData.writer.oneStatementStats });

  beforeAll(async () => {
    ({ t, g } = await appWithTable(dialect));
    await appendRows(g, 'Table1', [{ Name: 'warm' }]); // the writer knows the metadata: appends may go as one statement
  });
  afterAll(() => t?.close());

  it('records exactly one chained row with the action’s content, in the append’s one statement on PostgreSQL', async () => {
    const before = stats();
    const scope = await auditedAppend('one', async () => entry('test.append', 1));
    expect(scope.written).toBe(true);
    if (dialect === 'postgres') expect(stats()).toEqual({ written: before.written + 1, redone: before.redone });
    const rows = await chained('test.append');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor: 'api-token:7', ip: '10.0.0.7', target: 'POST rows 1', base_id: g.base.id, detail: '{"after":{"n":1}}' });
    if (dialect === 'postgres') expect(rows[0]!.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(await t.container.db.selectFrom('base_rows').select('row_id').where('base_id', '=', g.base.id).execute()).toHaveLength(2);
    for (const [appended, sealed] of await writerCounts()) expect(sealed).toBe(appended);
    expect(await t.container.audit.verify()).toMatchObject({ ok: true, pending: 0 });
  });

  it('an appendix that reads goes with its append into a transaction: still exactly one row', async () => {
    const before = stats();
    const scope = await auditedAppend('read', async (tx) => {
      const { rows } = await tx.run<{ n: number }>(CompiledQuery.raw('select 2 as n'));
      return entry('test.append_read', Number(rows[0]!.n));
    });
    expect(scope.written).toBe(true);
    if (dialect === 'postgres') expect(stats().redone).toBe(before.redone + 1);
    const rows = await chained('test.append_read');
    expect(rows.map((row) => row.detail)).toEqual(['{"after":{"n":2}}']);
    expect(await t.container.audit.verify()).toMatchObject({ ok: true });
  });

  it('audited and plain appends at once: each audited one recorded once (at most one per shared statement), every count sealed', async () => {
    const failedShared = t.container.baseData.writer.batches.stats.failedShared;
    const scopes = await Promise.all([
      ...Array.from({ length: 12 }, (_, i) => auditedAppend(`a${i}`, async () => entry('test.append_many', i))),
      ...Array.from({ length: 12 }, (_, i) => t.container.baseData.rows.append(g.base, actor, { table_name: 'Table1', rows: [{ Name: `p${i}` }] }).then(() => undefined)),
    ]);
    for (const scope of scopes) if (scope) expect(scope.written).toBe(true);
    expect(t.container.baseData.writer.batches.stats.failedShared).toBe(failedShared); // no shared statement failed over two writer counts
    const rows = await chained('test.append_many');
    expect(rows.map((row) => JSON.parse(row.detail).after.n).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    for (const [appended, sealed] of await writerCounts()) expect(sealed).toBe(appended);
    expect(await t.container.audit.verify()).toMatchObject({ ok: true, pending: 0 });
  });

  describe('two writes of one scope committing at once: the first to claim the appendix carries it, the other goes without', () => {
    /** A transaction inserting one workspace (a write of its own, on its own connection on PostgreSQL). */
    const insertWorkspace = async (type: string) => {
      const owner = (await t.container.db.selectFrom('users').select('id').executeTakeFirstOrThrow()).id;
      await t.container.db.transaction().execute((trx) => trx.insertInto('workspaces').values({ owner_id: owner, type, created_at: 0 }).execute());
    };
    const workspacesOfType = async (type: string) => (await t.container.db.selectFrom('workspaces').select('id').where('type', '=', type).execute()).length;

    it('two transactions racing: both commit, exactly one audit row', async () => {
      const scope = new CommitScope();
      let built = 0;
      // The appendix reads through its transaction (an await before the append): the other one reaches its COMMIT meanwhile.
      scope.appendix = t.container.audit.appendix(async (tx) => {
        built += 1;
        await tx.run(CompiledQuery.raw('select 1 as n'));
        return entry('test.race_tx', 1);
      });
      await withCommitScope(scope, () => Promise.all([insertWorkspace('race-tx'), insertWorkspace('race-tx'), insertWorkspace('race-tx')]));
      expect(scope.written).toBe(true);
      expect(built).toBe(1);
      expect(await workspacesOfType('race-tx')).toBe(3);
      expect(await chained('test.race_tx')).toHaveLength(1);
      expect(await t.container.audit.verify()).toMatchObject({ ok: true, pending: 0 });
    });

    it('two row appends racing (one statement each on PostgreSQL): both written, exactly one audit row', async () => {
      const scope = new CommitScope();
      scope.appendix = t.container.audit.appendix(async () => entry('test.race_append', 2));
      await withCommitScope(scope, () =>
        Promise.all(['race-a', 'race-b'].map((name) => t.container.baseData.rows.append(g.base, actor, { table_name: 'Table1', rows: [{ Name: name }] }))),
      );
      expect(scope.written).toBe(true);
      const names = (await t.container.db.selectFrom('base_rows').select('data').where('base_id', '=', g.base.id).execute()).map((r) => (typeof r.data === 'string' ? r.data : JSON.stringify(r.data)));
      expect(names.filter((data) => data.includes('race-a') || data.includes('race-b'))).toHaveLength(2);
      expect(await chained('test.race_append')).toHaveLength(1);
      for (const [appended, sealed] of await writerCounts()) expect(sealed).toBe(appended);
      expect(await t.container.audit.verify()).toMatchObject({ ok: true, pending: 0 });
    });

    it('a claimant whose transaction fails gives the appendix back: the next write of the scope carries it', async () => {
      const scope = new CommitScope();
      let calls = 0;
      scope.appendix = t.container.audit.appendix(async () => {
        calls += 1;
        if (calls === 1) throw new Error('first build fails');
        return entry('test.race_retry', 3);
      });
      await withCommitScope(scope, async () => {
        await expect(insertWorkspace('race-retry')).rejects.toThrow(/first build fails/);
        expect(scope.written).toBe(false);
        await insertWorkspace('race-retry');
      });
      expect(scope.written).toBe(true);
      expect(await workspacesOfType('race-retry')).toBe(1); // the failed one rolled back with its appendix
      expect(await chained('test.race_retry')).toHaveLength(1);
    });
  });

  it('an append the database refuses leaves no row and no count behind', async () => {
    await t.container.audit.seal();
    const counts = await writerCounts();
    const allow = await refuseEventsNamed(t.container.db, dialect);
    try {
      const scope = new CommitScope();
      scope.appendix = t.container.audit.appendix(async () => entry('test.append_refused', 0));
      await expect(withCommitScope(scope, () => t.container.baseData.rows.append(g.base, actor, { table_name: 'Table1', rows: [{ Name: 'refused' }] }))).rejects.toThrow(/refused by the test/);
      expect(scope.written).toBe(false);
    } finally {
      await allow();
    }
    expect(await chained('test.append_refused')).toEqual([]);
    expect(await t.container.db.selectFrom('audit_pending').select('id').execute()).toEqual([]);
    expect(await writerCounts()).toEqual(counts);
    expect(await t.container.audit.verify()).toMatchObject({ ok: true, pending: 0 });
  });

  it('verify names a row of a one-statement append that was edited, or deleted before it was sealed', async () => {
    const { db, audit } = t.container;
    // Where the row is now: pending on PostgreSQL (unless the sealer's timer was quicker), chained on SQLite.
    await auditedAppend('edited', async () => entry('test.append_edited', 3));
    await editAuditRow(t, 'test.append_edited', '10.9.9.9');
    expect((await audit.verify()).broken?.reason).toMatch(/was edited/);
    await audit.seal();
    expect((await audit.verify()).broken?.reason).toMatch(/was edited/); // once chained too
    await restartAuditChain(t);

    await auditedAppend('victim', async () => entry('test.append_victim', 4));
    await auditedAppend('after', async () => entry('test.append_after', 5));
    const victim = await deleteAuditRow(t, 'test.append_victim');
    expect((await audit.verify()).broken?.reason).toMatch(DELETED_REASON[victim]);
    await audit.seal();
    expect((await audit.verify()).broken?.reason).toMatch(victim === 'pending' ? /deleted before they were sealed/ : /missing \(deleted\)/);
  });
});
