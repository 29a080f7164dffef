import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, SharedDatabase, baseToken, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { addRows, gateway, inbox, ruleBase, share, updateRow, type RuleBase } from './notification-fixtures.js';
import { RunBatchCache } from '../../src/modules/automations/index.js';
import { automationsPath, createAutomation, listAutomations, runsOf, settle, WATCH_ALL_TRIGGER } from './automation-fixtures.js';

interface Hook {
  headers: IncomingHttpHeaders;
  body: string;
}

describe.each(DIALECTS)('automation rules: triggers, actions, loops and the run log (%s)', (dialect) => {
  let shared: SharedDatabase;
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let base: RuleBase;
  let smtp: SMTPServer;
  let mails: Array<{ to: string[]; raw: string }> = [];
  let hookServer: Server;
  let hookUrl: string;
  let hooks: Hook[] = [];
  let hookStatus = 200;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    hookServer = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hooks.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.statusCode = hookStatus;
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => hookServer.listen(0, '127.0.0.1', resolve));
    hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;
    shared = new SharedDatabase(dialect);
    const env = { SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`, WEBHOOK_ALLOW_PRIVATE: 'true', AUTOMATION_RETRY_SCHEDULE: '30s,5m' };
    t = await createTestApp(dialect, env, { database: await shared.open() });
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    base = await ruleBase(t, alice, 'Automated');
    await share(t, alice, base, bob, 'rw');
  });
  afterAll(async () => {
    await t.close();
    await shared.dispose();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await new Promise<void>((resolve) => hookServer.close(() => resolve()));
  });
  beforeEach(async () => {
    await settle(t);
    await t.container.db.deleteFrom('automation_rules').execute();
    await t.container.db.deleteFrom('notifications').execute();
    mails = [];
    hooks = [];
    hookStatus = 200;
    t.clock.advance(60 * 60_000);
    base.token = await baseToken(t, alice, base);
  });

  const rowsNamed = async () => {
    const res = await t.request({ method: 'GET', url: gateway(base, 'rows/?table_name=Table1'), token: base.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ rows: Array<Record<string, unknown>> }>().rows;
  };

  it('rows_added: notify, update_record and add_record run after the commit, once, and the rule does not trigger itself', async () => {
    const rule = await createAutomation(t, alice, base, {
      run_condition: 'per_update',
      trigger: { rule_name: 'On add', table_id: '0000', view_id: '0000', condition: 'rows_added' },
      actions: [
        { type: 'notify', users: [bob.virtualId], default_msg: '{Name} was added', _id: 'n1' },
        { type: 'update_record', updates: { Notes: 'seen {Name}' }, _id: 'u1' },
        { type: 'add_record', row: { Name: 'copy of {Name}' }, _id: 'a1' },
      ],
    });
    const [rowId] = await addRows(t, base, [{ Name: 'Alpha' }]);
    // Nothing ran inside the request: the row is as written until the runner has run.
    expect((await rowsNamed()).find((r) => r._id === rowId)?.[base.keys.Notes!] ?? null).toBeNull();
    await settle(t);
    const rows = await rowsNamed();
    expect(rows.find((r) => r._id === rowId)?.[base.keys.Notes!]).toBe('seen Alpha');
    expect(rows.map((r) => r['0000']).sort()).toEqual(['Alpha', 'copy of Alpha']);
    const notices = (await inbox(t, bob)).filter((n) => n.type === 'notification_rules');
    expect(notices.map((n) => n.detail.msg)).toEqual(['Alpha was added']);

    const runs = await runsOf(t, alice, base, rule.id);
    expect(runs).toHaveLength(1); // the copy it added did not trigger it again
    expect(runs[0]).toMatchObject({ trigger: 'rows_added', row_ids: [rowId], status: 'done', error: '', depth: 1 });
    expect(runs[0]!.actions.map((a) => [a._id, a.status])).toEqual([['n1', 'done'], ['u1', 'done'], ['a1', 'done']]);
    const [listed] = await listAutomations(t, alice, base);
    expect(listed).toMatchObject({ trigger_count: 1 });
    expect(listed!.last_trigger_time).not.toBe('');
    // The writes are marked as the automation's (op_app), so webhooks and other rules can tell.
    const apps = await t.container.db.selectFrom('events').select('op_app').where('row_id', '=', rowId!).execute();
    expect(apps.map((a) => a.op_app)).toContain(`automation:${rule.id}:1`);
  });

  it('filters_satisfy + lock_record: the matching row is locked, a later write by a non-admin is refused', async () => {
    await createAutomation(t, alice, base, {
      run_condition: 'per_update',
      trigger: { rule_name: 'Lock done', table_id: '0000', view_id: '0000', condition: 'filters_satisfy', filters: [{ column_key: base.keys.Status, filter_predicate: 'is', filter_term: 'Done' }] },
      actions: [{ type: 'lock_record', is_locked: true, _id: 'l' }],
    });
    const [open, done] = await addRows(t, base, [{ Name: 'o' }, { Name: 'd' }]);
    await updateRow(t, base, open!, { Notes: 'still open' });
    await updateRow(t, base, done!, { Status: 'Done' });
    await settle(t);
    const rows = await rowsNamed();
    expect(rows.find((r) => r._id === done)?._locked).toBe(true);
    expect(rows.find((r) => r._id === open)?._locked ?? null).toBeNull();
    const bobToken = await baseToken(t, bob, base);
    const refused = await t.request({ method: 'PUT', url: gateway(base, 'rows/'), token: bobToken, payload: { table_name: 'Table1', updates: [{ row_id: done, row: { Notes: 'x' } }] } });
    expect(refused.statusCode).toBe(403);
  });

  it('a chain of rules triggering each other stops at AUTOMATION_MAX_DEPTH with the reason in the run log', async () => {
    const a = await createAutomation(t, alice, base, { run_condition: 'per_update', trigger: { rule_name: 'A', table_id: '0000', view_id: '0000', condition: 'rows_added' }, actions: [{ type: 'add_record', row: { Name: 'from A' }, _id: 'a' }] });
    const b = await createAutomation(t, alice, base, { run_condition: 'per_update', trigger: { rule_name: 'B', table_id: '0000', view_id: '0000', condition: 'rows_added' }, actions: [{ type: 'add_record', row: { Name: 'from B' }, _id: 'b' }] });
    const before = (await rowsNamed()).length;
    await addRows(t, base, [{ Name: 'seed' }]);
    await settle(t);
    const runs = [...(await runsOf(t, alice, base, a.id)), ...(await runsOf(t, alice, base, b.id))];
    const stopped = runs.filter((r) => r.status === 'stopped');
    expect(stopped).toHaveLength(2);
    for (const run of stopped) expect(run.error).toMatch(/chain stopped: depth 4 exceeds AUTOMATION_MAX_DEPTH 3/);
    expect(runs.filter((r) => r.status === 'done').map((r) => r.depth).sort()).toEqual([1, 1, 2, 2, 3, 3]);
    // seed + 6 rows added by the runs at depths 1-3, then nothing more.
    expect((await rowsNamed()).length).toBe(before + 7);
  });

  it('send_email: to an address taken from a column and the copy_to, through the configured SMTP', async () => {
    const rule = await createAutomation(t, alice, base, {
      run_condition: 'per_update',
      trigger: WATCH_ALL_TRIGGER,
      actions: [{ type: 'send_email', send_to: '{Notes}', copy_to: 'boss@example.com', subject: 'About {Name}', default_msg: '{Name} is {Status}', _id: 'm' }],
    });
    const [rowId] = await addRows(t, base, [{ Name: 'Deal' }]);
    await updateRow(t, base, rowId!, { Notes: 'client@example.com', Status: 'Open' });
    await settle(t);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to.sort()).toEqual(['boss@example.com', 'client@example.com']);
    expect(mails[0]!.raw).toContain('Subject: About Deal');
    expect(mails[0]!.raw).toContain('Deal is Open');
    const [run] = await runsOf(t, alice, base, rule.id);
    expect(run).toMatchObject({ status: 'done', actions: [{ _id: 'm', status: 'done', detail: 'sent to 2' }] });
  });

  it('call_webhook: a templated, signed POST; a 500 is retried with back-off, then succeeds', async () => {
    const rule = await createAutomation(t, alice, base, {
      run_condition: 'per_update',
      trigger: WATCH_ALL_TRIGGER,
      actions: [{ type: 'call_webhook', url: hookUrl, body: '{"name":"{Name}","status":"{Status}"}', secret: 's3cret', _id: 'w' }],
    });
    const [rowId] = await addRows(t, base, [{ Name: 'Hooked' }]);
    hookStatus = 500;
    await updateRow(t, base, rowId!, { Status: 'Done' });
    await settle(t);
    expect(hooks).toHaveLength(1);
    let [run] = await runsOf(t, alice, base, rule.id);
    expect(run).toMatchObject({ status: 'pending', attempts: 1, actions: [{ status: 'pending', error: 'HTTP 500', attempts: 1 }] });

    hookStatus = 200;
    await t.container.automations.runner.runDue();
    expect(hooks).toHaveLength(1); // not due before its back-off
    t.clock.advance(31_000);
    await t.container.automations.runner.runDue();
    expect(hooks).toHaveLength(2);
    const last = hooks[1]!;
    expect(last.body).toBe('{"name":"Hooked","status":"Done"}');
    expect(last.headers['x-seatable-signature']).toBe(`sha256=${createHmac('sha256', 's3cret').update(last.body).digest('hex')}`);
    [run] = await runsOf(t, alice, base, rule.id);
    expect(run).toMatchObject({ status: 'done', attempts: 2, actions: [{ status: 'done', detail: 'HTTP 200', attempts: 2 }] });
  });

  it('call_webhook secret: sealed at rest, masked in responses, kept when an update sends the mask back', async () => {
    const body = { run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'call_webhook', url: hookUrl, body: '{"n":"{Name}"}', secret: 'pa55-word', _id: 'w' }] };
    const rule = await createAutomation(t, alice, base, body);
    expect(rule.actions[0]!.secret).toBe('********');
    expect((await listAutomations(t, alice, base)).find((r) => r.id === rule.id)!.actions[0]!.secret).toBe('********');
    const stored = (await t.container.db.selectFrom('automation_rules').select('actions').where('id', '=', rule.id).executeTakeFirstOrThrow()).actions;
    expect(stored).not.toContain('pa55-word');
    // The editor sends the mask back with another change: the stored secret stays.
    const put = await t.request({ method: 'PUT', url: automationsPath(base, rule.id), token: alice.token, payload: { ...body, actions: [{ ...body.actions[0], body: '{"m":"{Name}"}', secret: '********' }] } });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json<{ actions: Array<{ secret: string }> }>().actions[0]!.secret).toBe('********');
    const [rowId] = await addRows(t, base, [{ Name: 'Sealed' }]);
    await updateRow(t, base, rowId!, { Status: 'Done' });
    await settle(t);
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.body).toBe('{"m":"Sealed"}');
    expect(hooks[0]!.headers['x-seatable-signature']).toBe(`sha256=${createHmac('sha256', 'pa55-word').update(hooks[0]!.body).digest('hex')}`);
    // The mask for an action that has no stored secret is refused.
    const bad = await t.request({ method: 'PUT', url: automationsPath(base, rule.id), token: alice.token, payload: { ...body, actions: [{ ...body.actions[0], _id: 'other', secret: '********' }] } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error_msg: string }>().error_msg).toMatch(/secret/);
  });

  it('a failed row write is recorded once and not retried (the write and its record are one transaction)', async () => {
    const rule = await createAutomation(t, alice, base, {
      run_condition: 'per_update',
      trigger: WATCH_ALL_TRIGGER,
      actions: [{ type: 'update_record', updates: { Priority: 'not a number' }, _id: 'u' }],
    });
    const [rowId] = await addRows(t, base, [{ Name: 'p' }]);
    await updateRow(t, base, rowId!, { Notes: 'go' });
    await settle(t);
    t.clock.advance(10 * 60_000);
    await t.container.automations.runner.runDue();
    const runs = await runsOf(t, alice, base, rule.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ status: 'failed', attempts: 1, actions: [{ _id: 'u', status: 'failed' }] });
    expect(runs[0]!.error).toMatch(/Priority/);
  });

  it('periodic with condition: per_day at notify_hour in TIME_ZONE, one run per matching row, once per period across two instances', async () => {
    const rule = await createAutomation(t, alice, base, {
      run_condition: 'per_day',
      trigger: { rule_name: 'Daily open', table_id: '0000', view_id: '0000', condition: 'run_periodically_by_condition', notify_hour: 9, filters: [{ column_key: base.keys.Status, filter_predicate: 'is', filter_term: 'Open' }, { column_key: '0000', filter_predicate: 'contains', filter_term: 'per-' }] },
      actions: [{ type: 'notify', users: [bob.virtualId], default_msg: '{Name} is still open', _id: 'n' }],
    });
    const ids = await addRows(t, base, [{ Name: 'per-1', Status: 'Open' }, { Name: 'per-2', Status: 'Open' }, { Name: 'per-3', Status: 'Done' }, { Name: 'other', Status: 'Open' }]);
    await settle(t);
    const second = await createTestApp(dialect, {}, { database: await shared.open(), clock: t.clock });
    try {
      const due = (await t.container.db.selectFrom('automation_rules').select('next_run_at').where('id', '=', rule.id).executeTakeFirstOrThrow()).next_run_at!;
      expect(new Date(Number(due)).getUTCHours()).toBe(9); // TIME_ZONE is UTC in tests
      t.clock.set(Number(due) + 1000);
      const [one, two] = await Promise.all([t.container.automations.periodic.run(), second.container.automations.periodic.run()]);
      expect(one.runs + two.runs).toBe(2);
      // Each instance performs the runs it queued: wait for the second's pass too, not only this one's.
      await settle(second);
      await settle(t);
      const runs = await runsOf(t, alice, base, rule.id);
      expect(runs.map((r) => r.row_ids[0]).sort()).toEqual([ids[0], ids[1]].sort());
      expect((await inbox(t, bob)).map((n) => n.detail.msg).sort()).toEqual(['per-1 is still open', 'per-2 is still open']);
      // Same period again: nothing new.
      expect((await t.container.automations.periodic.run()).runs).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('periodic with condition on a big table: the filtered column gets a row index and the next period reads through it, same rows', async () => {
    const indexes = t.container.baseData.indexes;
    const saved = { ...indexes.options };
    Object.assign(indexes.options, { minRows: 1, recountMs: 0 });
    try {
      const rule = await createAutomation(t, alice, base, {
        run_condition: 'per_day',
        trigger: { rule_name: 'Indexed', table_id: '0000', view_id: '0000', condition: 'run_periodically_by_condition', notify_hour: 7, filters: [{ column_key: base.keys.Status, filter_predicate: 'is', filter_term: 'Open' }, { column_key: '0000', filter_predicate: 'contains', filter_term: 'idx-' }] },
        actions: [{ type: 'update_record', updates: { Notes: 'waited' }, _id: 'u' }],
      });
      const ids = await addRows(t, base, [{ Name: 'idx-1', Status: 'Open' }, { Name: 'idx-2', Status: 'Done' }, { Name: 'idx-3', Status: 'Open' }]);
      await settle(t);
      const period = async () => {
        const due = (await t.container.db.selectFrom('automation_rules').select('next_run_at').where('id', '=', rule.id).executeTakeFirstOrThrow()).next_run_at!;
        t.clock.set(Number(due) + 1000);
        const report = await t.container.automations.periodic.run();
        await settle(t);
        return report.runs;
      };
      expect(await period()).toBe(2);
      await indexes.idle();
      const table = (await indexes.indexesOf(base.id, '0000')).map((e) => e.column_key);
      expect(table).toContain(base.keys.Status);
      expect(await period()).toBe(2);
      const runs = await runsOf(t, alice, base, rule.id);
      expect(runs.map((r) => r.status)).toEqual(['done', 'done', 'done', 'done']);
      expect(runs.map((r) => r.row_ids[0]).sort()).toEqual([ids[0], ids[0], ids[2], ids[2]].sort());
    } finally {
      Object.assign(indexes.options, saved);
    }
  });

  it('a deleted column makes the rule invalid: is_valid false, its creator told, the admin list shows it', async () => {
    const col = await t.request({ method: 'POST', url: gateway(base, 'columns/'), token: base.token, payload: { table_name: 'Table1', column_name: 'Temp', column_type: 'text' } });
    expect(col.statusCode, col.body).toBe(200);
    const rule = await createAutomation(t, alice, base, { run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'update_record', updates: { Temp: 'x' }, _id: 'u' }] });
    const del = await t.request({ method: 'DELETE', url: gateway(base, 'columns/'), token: base.token, payload: { table_name: 'Table1', column: 'Temp' } });
    expect(del.statusCode, del.body).toBe(200);
    const [listed] = await listAutomations(t, alice, base);
    expect(listed).toMatchObject({ id: rule.id, is_valid: false });
    const notice = (await inbox(t, alice)).find((n) => n.type === 'auto_rule_invalid');
    expect(notice?.detail).toMatchObject({ rule_id: rule.id, rule_name: 'Watch all' });
    const admin = await createUser(t, { admin: true });
    const invalid = await t.request({ method: 'GET', url: '/api/v2.1/admin/invalid-automation-rules/', token: admin.token });
    expect(invalid.json<{ invalid_automation_rule_list: Array<{ id: number }> }>().invalid_automation_rule_list.map((r) => r.id)).toContain(rule.id);
    expect((await t.request({ method: 'GET', url: automationsPath(base, rule.id, 'runs/'), token: alice.token })).statusCode).toBe(200);
  });

  it('runs of one batch share the rule and the base context: row writes keep them, a structure change is seen at the next run', async () => {
    const col = await t.request({ method: 'POST', url: gateway(base, 'columns/'), token: base.token, payload: { table_name: 'Table1', column_name: 'Cached', column_type: 'text' } });
    expect(col.statusCode, col.body).toBe(200);
    const rule = await createAutomation(t, alice, base, { run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'update_record', updates: { Cached: 'x' }, _id: 'u' }] });
    const cache = new RunBatchCache(t.container.db);
    const first = await cache.rule(rule.id);
    expect(first?.check.ok).toBe(true);
    // A row write bumps the base's revision, not its structure version: the same context and check are reused.
    const [rowId] = await addRows(t, base, [{ Name: 'cached' }]);
    await updateRow(t, base, rowId!, { Name: 'cached again' });
    const second = await cache.rule(rule.id);
    expect(second?.context).toBe(first?.context);
    expect(second?.check).toBe(first?.check);
    // The column the action writes is deleted: the next run of the same batch sees the new structure.
    const del = await t.request({ method: 'DELETE', url: gateway(base, 'columns/'), token: base.token, payload: { table_name: 'Table1', column: 'Cached' } });
    expect(del.statusCode, del.body).toBe(200);
    const third = await cache.rule(rule.id);
    expect(third?.context).not.toBe(first?.context);
    expect(third?.check).toMatchObject({ ok: false, reason: expect.stringContaining('Cached') });
    cache.forget(rule.id);
    expect(await cache.rule(rule.id)).toBeNull();
    await settle(t);
  });
});
