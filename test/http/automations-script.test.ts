import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { expectNoStall, STALL_MS } from '../helpers/ping-stall.js';
import { addRows, gateway, ruleBase, type RuleBase } from './notification-fixtures.js';
import { automationsPath, createAutomation, runsOf, settle } from './automation-fixtures.js';

/** `run_script`: JavaScript in QuickJS on the script thread, with CPU, memory and output limits. */
describe.each(DIALECTS)('automation rules: run_script (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let base: RuleBase;

  beforeAll(async () => {
    // The CPU limit is above the stall margin: a script run on the main thread would fail the /ping/ check.
    t = await createTestApp(dialect, { AUTOMATION_SCRIPT_TIMEOUT_MS: String(STALL_MS + 1000), AUTOMATION_SCRIPT_MEMORY_MB: '8', AUTOMATION_SCRIPT_MS_PER_MINUTE: '600000' });
    alice = await createUser(t, { name: 'Alice' });
    base = await ruleBase(t, alice, 'Scripted');
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await settle(t);
    await t.container.db.deleteFrom('automation_rules').execute();
  });

  const scriptRule = (script: string) =>
    createAutomation(t, alice, base, { run_condition: 'per_update', trigger: { rule_name: 'script', table_id: '0000', view_id: '0000', condition: 'rows_added' }, actions: [{ type: 'run_script', script, _id: 's' }] });

  const rowNamed = async (id: string) => {
    const res = await t.request({ method: 'GET', url: gateway(base, `rows/${id}/?table_name=Table1&convert_keys=true`), token: base.token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Record<string, unknown>>();
  };

  it('a script reads the triggering row, updates it and adds a row through the base client; its output is logged', async () => {
    const rule = await scriptRule(`
      console.log('got', row.Name);
      const fresh = await base.getRow('Table1', row._id);
      await base.updateRow('Table1', row._id, { Notes: 'seen ' + fresh.Name });
      const added = await base.addRow('Table1', { Name: 'child of ' + row.Name });
      const all = await base.listRows('Table1', { limit: 10 });
      console.log('rows', all.length, typeof added._id);`);
    const [rowId] = await addRows(t, base, [{ Name: 'Parent' }]);
    await settle(t);
    expect((await rowNamed(rowId!)).Notes).toBe('seen Parent');
    const [run] = await runsOf(t, alice, base, rule.id);
    expect(run).toMatchObject({ status: 'done', actions: [{ _id: 's', status: 'done', output: 'got Parent\nrows 2 string\n' }] });
    // The added row is this rule's own write: it does not trigger the rule again.
    expect(await runsOf(t, alice, base, rule.id)).toHaveLength(1);
  });

  it('an infinite loop is stopped at the CPU limit while other requests keep answering', async () => {
    const rule = await scriptRule('while (true) {}');
    await addRows(t, base, [{ Name: 'loop' }]);
    await expectNoStall(t, () => settle(t));
    const [run] = await runsOf(t, alice, base, rule.id);
    expect(run!.status).toBe('failed');
    expect(run!.actions[0]!.error).toMatch(/time limit/);
  });

  it('unbounded allocation is stopped at the memory limit; fetch, require and import are not there', async () => {
    const cases: Array<[string, RegExp]> = [
      ['const a = []; while (true) a.push([1, 2, 3, 4, 5, 6, 7, 8]);', /memory limit/],
      ["await fetch('http://127.0.0.1/')", /fetch' is not defined/],
      ["require('node:fs')", /require' is not defined/],
      ["await import('node:fs')", /could not load module/],
      ['console.log("x".repeat(1000)); for (let i = 0; i < 200; i++) console.log("y".repeat(1000));', /^$/],
    ];
    const rules = [];
    for (const [script] of cases) rules.push(await scriptRule(script));
    await addRows(t, base, [{ Name: 'probe' }]);
    await settle(t);
    for (const [i, [, reason]] of cases.entries()) {
      const [run] = await runsOf(t, alice, base, rules[i]!.id);
      const outcome = run!.actions[0]! as { status: string; error?: string; output?: string };
      if (reason.source === '^$') {
        expect(outcome.status).toBe('done');
        expect(outcome.output!.length).toBeLessThan(64 * 1024 + 100);
        expect(outcome.output).toMatch(/\[output truncated\]$/);
      } else {
        expect(outcome.status, cases[i]![0]).toBe('failed');
        expect(outcome.error).toMatch(reason);
      }
    }
  });

  it('a script without code is refused with a 400', async () => {
    const res = await t.request({
      method: 'POST',
      url: automationsPath(base),
      token: alice.token,
      payload: { run_condition: 'per_update', trigger: { rule_name: 'x', table_id: '0000', view_id: '0000', condition: 'rows_added' }, actions: [{ type: 'run_script', script: ' ', _id: 's' }] },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error_msg: string }>().error_msg).toMatch(/script/);
  });
});

describe.each(DIALECTS)('automation rules: the per-minute run limit (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let base: RuleBase;
  beforeAll(async () => {
    t = await createTestApp(dialect, { AUTOMATION_RUNS_PER_MINUTE: '2' });
    alice = await createUser(t, { name: 'Alice' });
    base = await ruleBase(t, alice, 'Limited');
  });
  afterAll(() => t.close());

  it('triggers past AUTOMATION_RUNS_PER_MINUTE are logged as skipped with the reason; the next minute runs again', async () => {
    const rule = await createAutomation(t, alice, base, {
      run_condition: 'per_update',
      trigger: { rule_name: 'limited', table_id: '0000', view_id: '0000', condition: 'rows_added' },
      actions: [{ type: 'update_record', updates: { Notes: 'ran' }, _id: 'u' }],
    });
    await addRows(t, base, [{ Name: 'a' }, { Name: 'b' }, { Name: 'c' }, { Name: 'd' }]);
    await settle(t);
    let runs = await runsOf(t, alice, base, rule.id);
    expect(runs.map((r) => r.status).sort()).toEqual(['done', 'done', 'skipped', 'skipped']);
    const skipped = runs.find((r) => r.status === 'skipped')!;
    expect(skipped.error).toMatch(/AUTOMATION_RUNS_PER_MINUTE/);
    expect(skipped.row_ids).toHaveLength(1);
    // Skipped records do not use the budget: a minute later two runs fit again.
    t.clock.advance(61_000);
    await addRows(t, base, [{ Name: 'e' }, { Name: 'f' }]);
    await settle(t);
    runs = await runsOf(t, alice, base, rule.id);
    expect(runs.filter((r) => r.status === 'done')).toHaveLength(4);
  });
});

describe.each(DIALECTS)('automation rules: the per-base script budget (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let busy: RuleBase;
  let quiet: RuleBase;
  beforeAll(async () => {
    t = await createTestApp(dialect, { AUTOMATION_SCRIPT_TIMEOUT_MS: '200', AUTOMATION_SCRIPT_MS_PER_MINUTE: '200' });
    alice = await createUser(t, { name: 'Alice' });
    busy = await ruleBase(t, alice, 'Busy');
    quiet = await ruleBase(t, alice, 'Quiet');
  });
  afterAll(() => t.close());

  const scriptRule = (base: RuleBase, script: string) =>
    createAutomation(t, alice, base, { run_condition: 'per_update', trigger: { rule_name: 'script', table_id: '0000', view_id: '0000', condition: 'rows_added' }, actions: [{ type: 'run_script', script, _id: 's' }] });

  it('a base past AUTOMATION_SCRIPT_MS_PER_MINUTE gets failed runs with the reason; other bases are unaffected; the next minute runs again', async () => {
    const spinning = await scriptRule(busy, 'while (true) {}');
    const calm = await scriptRule(quiet, "console.log('fine')");
    await addRows(t, busy, [{ Name: 'first' }, { Name: 'second' }]);
    await addRows(t, quiet, [{ Name: 'other base' }]);
    await settle(t);

    const runs = (await runsOf(t, alice, busy, spinning.id)).sort((a, b) => a.id - b.id);
    expect(runs.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect(runs[0]!.actions[0]!.error).toMatch(/time limit/);
    expect(runs[1]!.actions[0]!.error).toMatch(/script budget exceeded: the base used its 200 ms of script CPU time for this minute/);
    expect(runs[1]!.error).toMatch(/script budget exceeded/);
    const [other] = await runsOf(t, alice, quiet, calm.id);
    expect(other).toMatchObject({ status: 'done', actions: [{ status: 'done', output: 'fine\n' }] });

    t.clock.advance(61_000);
    await addRows(t, busy, [{ Name: 'third' }]);
    await settle(t);
    const [latest] = await runsOf(t, alice, busy, spinning.id);
    expect(latest!.actions[0]!.error).toMatch(/time limit/);
  });
});

describe.each(DIALECTS)('automation rules: the CPU limit inside long native operations (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let hostile: RuleBase;
  let other: RuleBase;
  const warnings: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  beforeAll(async () => {
    t = await createTestApp(dialect, { AUTOMATION_SCRIPT_TIMEOUT_MS: '300', AUTOMATION_SCRIPT_MEMORY_MB: '32', AUTOMATION_SCRIPT_MS_PER_MINUTE: '600000' });
    t.container.automations.useLogger({ error: () => {}, warn: (obj, msg) => warnings.push({ obj: obj as Record<string, unknown>, msg }) });
    alice = await createUser(t, { name: 'Alice' });
    hostile = await ruleBase(t, alice, 'Hostile');
    other = await ruleBase(t, alice, 'Bystander');
  });
  afterAll(() => t.close());

  const scriptRule = (base: RuleBase, script: string, name = 'script') =>
    createAutomation(t, alice, base, { run_condition: 'per_update', trigger: { rule_name: name, table_id: '0000', view_id: '0000', condition: 'rows_added' }, actions: [{ type: 'run_script', script, _id: 's' }] });

  // Each spends its time in native calls between which QuickJS's interrupt handler is hardly consulted.
  const natives = {
    repeat: "const s = 'ab'.repeat(1 << 21); for (let i = 0; i < 100000; i++) s.repeat(4);",
    join: "const a = new Array(200000).fill('abcdefgh'); for (let i = 0; i < 100000; i++) a.join(',');",
    json: "const o = []; for (let i = 0; i < 30000; i++) o.push({ a: i, b: 'x'.repeat(20) }); for (let i = 0; i < 100000; i++) JSON.stringify(o);",
  };

  // Three scripts of 300 ms CPU each, a thread restart after each, on a loaded machine: more than the default 30 s.
  it('each is stopped near the CPU limit with the reason logged; another base and the next run are unaffected', { timeout: 120_000 }, async () => {
    const rules = await Promise.all(Object.entries(natives).map(([name, code]) => scriptRule(hostile, code, name)));
    const bystander = await scriptRule(other, "await base.updateRow('Table1', row._id, { Notes: 'ok' }); console.log('fine');");
    await addRows(t, hostile, [{ Name: 'trigger' }]);
    const [otherRow] = await addRows(t, other, [{ Name: 'calm' }]);
    await settle(t);

    for (const rule of rules) {
      const [run] = await runsOf(t, alice, hostile, rule.id);
      const outcome = run!.actions[0]! as { status: string; error?: string; cpu_ms?: number };
      expect(run!.status).toBe('failed');
      expect(outcome.error).toMatch(/^time limit: the script ran for more than 300 ms of CPU time/);
      // Measured CPU time of the script thread: near the limit, not the seconds the operations would take.
      expect(outcome.cpu_ms).toBeLessThan(300 + 400);
      expect(warnings.some((w) => w.msg === 'automation script failed' && w.obj.ruleId === rule.id && /time limit/.test(String(w.obj.err)))).toBe(true);
    }
    const [calm] = await runsOf(t, alice, other, bystander.id);
    expect(calm).toMatchObject({ status: 'done', actions: [{ status: 'done', output: 'fine\n' }] });
    const res = await t.request({ method: 'GET', url: gateway(other, `rows/${otherRow}/?table_name=Table1&convert_keys=true`), token: other.token });
    expect(res.json<{ Notes: string }>().Notes).toBe('ok');

    // The next run in the hostile base works (on a fresh thread).
    await t.container.db.deleteFrom('automation_rules').execute();
    const next = await scriptRule(hostile, "console.log('next', row.Name)");
    await addRows(t, hostile, [{ Name: 'again' }]);
    await settle(t);
    const [after] = await runsOf(t, alice, hostile, next.id);
    expect(after).toMatchObject({ status: 'done', actions: [{ status: 'done', output: 'next again\n' }] });
  });
});
