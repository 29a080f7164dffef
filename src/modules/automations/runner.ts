import type { Updateable } from 'kysely';
import type { Db, DialectName, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { Mailer } from '../../platform/mail/index.js';
import type { OutboundHttp } from '../../platform/http/index.js';
import type { StoredRow } from '../filters/index.js';
import type { SecretBox } from '../webhooks/index.js';
import type { ScopedRowWriter, BaseRef, Actor } from '../rows/index.js';
import { callWebhook, notify, PermanentError, sendEmail, writeRow, type ActionInput } from './actions.js';
import type { AutomationInvalidation } from './invalidation.js';
import { automationApp, OUTBOUND_ACTIONS, ROW_ACTIONS, type ActionOutcome, type AutomationAction, type AutomationRule, type WriteMany } from './model.js';
import { scriptClient, type RowReads } from './script-client.js';
import { errorMessage, type ScriptThreads } from './script-threads.js';
import { RunBatchCache } from './run-batch-cache.js';
import type { AutomationRunsTable } from './automations.table.js';
import { claimDueRuns, renewLease, updateRun, type RunRow } from './runs.repository.js';

export type { WriteMany } from './model.js';

/** `run_script` limits (AUTOMATION_SCRIPT_*). */
export interface ScriptSettings {
  cpuMs: number;
  memoryBytes: number;
  msPerMinute: number;
}

export interface RunnerDeps {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  writeMany: WriteMany;
  mailer: Mailer;
  http: OutboundHttp;
  /** Opens `call_webhook` secrets (sealed at rest). */
  secrets: SecretBox;
  invalidation: AutomationInvalidation;
  /** `run_script`: the script thread, the rows module's reads, the limits. */
  scripts: ScriptThreads;
  reads: RowReads;
  script: ScriptSettings;
  timeZone: string;
  emailDelayMs: number;
  /** Back-off before each retry of an e-mail or webhook action; its length is the number of retries. */
  retrySchedule: readonly number[];
  log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** A claimed run is not handed to another runner for this long (a crashed runner's run comes back after it). */
const LEASE_MS = 5 * 60_000;
/** What one script may print; more is cut off. */
const SCRIPT_OUTPUT_BYTES = 64 * 1024;
/** Wall-clock allowance of a script on top of 4x its CPU time (its base calls wait for the database). */
const SCRIPT_WALL_EXTRA_MS = 10_000;
const BATCH = 50;

/**
 * Performs queued runs after the commit that queued them. Per run: the notify and row-writing actions
 * in ONE transaction of the rows module together with the run record (so a row write happens once or
 * not at all), then the outbound actions (e-mail, webhook), each retried with back-off on its own.
 */
export class AutomationRunner {
  private running: Promise<number> | null = null;
  private again = false;
  private stopped = false;
  /** Script CPU time used per base in the current minute (AUTOMATION_SCRIPT_MS_PER_MINUTE). */
  private readonly scriptBudget = new Map<number, { minute: number; used: number }>();
  /** false: every run reads its rule and base context afresh (the behaviour before the batch cache; the bench's baseline). */
  shareBatch = true;

  constructor(private readonly deps: RunnerDeps) {}

  /** Runs what is due now; concurrent calls share one pass (and ask for another when work arrived meanwhile). */
  wake(): void {
    void this.runDue().catch((error: unknown) => this.deps.log.error({ err: error }, 'automation runner failed'));
  }

  /** Waits for the pass in flight; no new pass starts afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running?.catch(() => 0);
  }

  async runDue(): Promise<number> {
    if (this.stopped) return 0;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let total = 0;
      do {
        this.again = false;
        for (;;) {
          // One statement claims the batch; runs of one batch share rule reads, base contexts and rule checks.
          const claimedAt = this.deps.clock.now();
          let heldUntil = claimedAt + LEASE_MS;
          const runs = await claimDueRuns(this.deps.db, this.deps.dialect, claimedAt, BATCH, LEASE_MS);
          const shared = new RunBatchCache(this.deps.db);
          let ran = 0;
          const lost = new Set<number>();
          for (const [i, run] of runs.entries()) {
            if (this.stopped) {
              // Stopping: the runs not started are due again at once (for another instance, or the next start).
              await renewLease(this.deps.db, runs.slice(i).map((r) => Number(r.id)).filter((runId) => !lost.has(runId)), heldUntil, this.deps.clock.now());
              break;
            }
            // A slow batch (scripts, slow webhooks) renews the lease of its remaining runs before it runs out.
            if (this.deps.clock.now() > heldUntil - LEASE_MS / 2) {
              const rest = runs.slice(i).map((r) => Number(r.id)).filter((runId) => !lost.has(runId));
              const until = this.deps.clock.now() + LEASE_MS;
              const held = await renewLease(this.deps.db, rest, heldUntil, until);
              for (const runId of rest) if (!held.has(runId)) lost.add(runId);
              heldUntil = until;
            }
            if (lost.has(Number(run.id))) continue;
            await this.execute(run, this.shareBatch ? shared : new RunBatchCache(this.deps.db));
            ran++;
          }
          total += ran;
          if (runs.length < BATCH || ran === 0) break;
        }
      } while (this.again);
      return total;
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async execute(run: RunRow, cache: RunBatchCache): Promise<void> {
    const { db, clock } = this.deps;
    const started = clock.now();
    const id = Number(run.id);
    const outcomes = JSON.parse(run.outcomes) as ActionOutcome[];
    const cached = await cache.rule(Number(run.rule_id));
    const finish = (patch: { status: string; error: string | null }) =>
      updateRun(db, id, { ...patch, outcomes: JSON.stringify(outcomes), finished_at: clock.now(), next_attempt_at: null, duration_ms: Number(run.duration_ms) + clock.now() - started });
    if (!cached) return finish({ status: 'failed', error: 'the rule was deleted or is invalid' });
    const { rule, context, check } = cached;
    if (!check.ok) {
      await db.transaction().execute((trx) => this.deps.invalidation.invalidate(trx, rule, check.reason));
      cache.forget(rule.id);
      return finish({ status: 'failed', error: `the rule became invalid: ${check.reason}` });
    }
    const creator = [...context.members.entries()].find(([, m]) => m.userId === rule.creatorId);
    if (!creator) return finish({ status: 'failed', error: 'the rule creator no longer has access to the base' });

    const input: ActionInput = {
      rule,
      row: run.row === null ? null : (JSON.parse(run.row) as StoredRow),
      table: check.prepared.table,
      members: context.members,
      timeZone: this.deps.timeZone,
      now: started,
      doc: context.doc,
      dialect: this.deps.dialect,
    };
    const actionOf = new Map(rule.actions.map((a) => [a._id, a]));
    const pending = (test: (a: AutomationAction) => boolean) =>
      outcomes.filter((o) => o.status === 'pending' && actionOf.has(o._id) && test(actionOf.get(o._id)!));

    // 1. notify + row writes: one transaction with the run record — its final record when nothing else is left to do.
    const attempt = Number(run.attempts) + 1;
    const inner = pending((a) => !OUTBOUND_ACTIONS.has(a.type) && a.type !== 'run_script');
    const nothingAfter = pending((a) => OUTBOUND_ACTIONS.has(a.type) || a.type === 'run_script').length === 0;
    if (inner.length > 0) {
      const work = async (trx: Executor, rows: ScopedRowWriter | null) => {
        for (const o of inner) {
          const action = actionOf.get(o._id)!;
          o.detail = ROW_ACTIONS.has(action.type) ? await writeRow(rows!, action, input) : await notify(trx, action, input, this.deps.emailDelayMs);
          o.status = 'done';
        }
        await updateRun(trx, id, nothingAfter ? this.finalRecord(run, outcomes, attempt, started) : { outcomes: JSON.stringify(outcomes) });
      };
      try {
        if (inner.some((o) => ROW_ACTIONS.has(actionOf.get(o._id)!.type))) {
          const actor: Actor = { user: creator[0], app: automationApp(rule.id, Number(run.depth)), userId: rule.creatorId };
          await this.deps.writeMany({ id: rule.baseId, uuid: rule.dtableUuid }, actor, (rows) => work(rows.trx, rows));
        } else {
          await db.transaction().execute((trx) => work(trx, null));
        }
        if (nothingAfter) return;
      } catch (error) {
        // Rolled back as a whole: nothing was written, so nothing is written twice. Not retried.
        const message = errorText(error);
        for (const o of inner) Object.assign(o, { status: 'failed', error: message, detail: undefined });
        this.deps.log.warn({ ruleId: rule.id, runId: id, err: message }, 'automation row actions failed');
      }
    }

    // 2. scripts, after that commit, on the script thread; not retried (their writes are not idempotent).
    const actor: Actor = { user: creator[0], app: automationApp(rule.id, Number(run.depth)), userId: rule.creatorId };
    for (const o of pending((a) => a.type === 'run_script')) {
      Object.assign(o, await this.runScript(rule, actionOf.get(o._id)!, input, actor));
      if (o.status === 'failed') this.deps.log.warn({ ruleId: rule.id, runId: id, action: o._id, err: o.error }, 'automation script failed');
    }

    // 3. outbound actions, each retried with back-off.
    for (const o of pending((a) => OUTBOUND_ACTIONS.has(a.type))) {
      const action = actionOf.get(o._id)!;
      o.attempts = (o.attempts ?? 0) + 1;
      try {
        o.detail = action.type === 'send_email' ? await sendEmail(this.deps.mailer, action, input) : await callWebhook(this.deps.http, action, input, this.deps.secrets);
        o.status = 'done';
        delete o.error;
      } catch (error) {
        o.error = errorText(error);
        if (error instanceof PermanentError || o.attempts > this.deps.retrySchedule.length) o.status = 'failed';
        this.deps.log.warn({ ruleId: rule.id, runId: id, action: o._id, attempt: o.attempts, err: o.error }, 'automation action failed');
      }
    }

    if (outcomes.some((o) => o.status === 'pending')) {
      const now = clock.now();
      const delay = this.deps.retrySchedule[Math.min(attempt - 1, this.deps.retrySchedule.length - 1)] ?? 60_000;
      await updateRun(db, id, { outcomes: JSON.stringify(outcomes), attempts: attempt, next_attempt_at: now + delay, duration_ms: Number(run.duration_ms) + now - started });
      return;
    }
    await updateRun(db, id, this.finalRecord(run, outcomes, attempt, started));
  }

  /** The finished run's record: its status from its actions' outcomes (the first failed one is the run's error). */
  private finalRecord(run: RunRow, outcomes: ActionOutcome[], attempt: number, started: number): Updateable<AutomationRunsTable> {
    const now = this.deps.clock.now();
    const failed = outcomes.find((o) => o.status === 'failed');
    return {
      outcomes: JSON.stringify(outcomes),
      attempts: attempt,
      status: failed ? 'failed' : 'done',
      error: failed ? `${failed.type} ${failed._id}: ${failed.error ?? 'failed'}` : null,
      finished_at: now,
      next_attempt_at: null,
      duration_ms: Number(run.duration_ms) + now - started,
    };
  }

  private async runScript(rule: AutomationRule, action: AutomationAction, input: ActionInput, actor: Actor): Promise<Partial<ActionOutcome>> {
    const { script, clock } = this.deps;
    const minute = Math.floor(clock.now() / 60_000);
    const budget = this.scriptBudget.get(rule.baseId);
    const used = budget?.minute === minute ? budget.used : 0;
    if (used >= script.msPerMinute) {
      return { status: 'failed', error: `script budget exceeded: the base used its ${script.msPerMinute} ms of script CPU time for this minute (AUTOMATION_SCRIPT_MS_PER_MINUTE); the script did not run` };
    }
    const cpuMs = Math.min(script.cpuMs, script.msPerMinute - used);
    const base = { id: rule.baseId, uuid: rule.dtableUuid };
    const host = scriptClient(this.deps.reads, this.deps.writeMany, base, actor, actor.user);
    const row = await scriptRow(this.deps.reads, base, input);
    const job = { code: String(action.script ?? ''), row, cpuMs, memoryBytes: script.memoryBytes, outputBytes: SCRIPT_OUTPUT_BYTES };
    const result = await this.deps.scripts.run(job, host, cpuMs * 4 + SCRIPT_WALL_EXTRA_MS);
    if (this.scriptBudget.size > 10_000) this.scriptBudget.clear();
    this.scriptBudget.set(rule.baseId, { minute, used: used + Math.max(result.cpuMs, result.ok ? 0 : cpuMs) });
    return { status: result.ok ? 'done' : 'failed', output: result.output, cpu_ms: result.cpuMs, ...(result.ok ? { detail: 'script finished' } : { error: result.error }) };
  }

}

const errorText = errorMessage;

/** The triggering row as scripts see it: as it is now, keyed by column names (as stored, renamed, if it was deleted). */
async function scriptRow(reads: RowReads, base: { id: number; uuid: string }, input: ActionInput): Promise<unknown> {
  if (!input.row) return null;
  try {
    return await reads.get(base, input.row._id, { table_id: input.table._id, convert_keys: true });
  } catch {
    const names = new Map(input.table.columns.map((c) => [c.key, c.name]));
    return Object.fromEntries(Object.entries(input.row).map(([k, v]) => [names.get(k) ?? k, v]));
  }
}
