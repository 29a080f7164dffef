import type { Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { Mailer } from '../../platform/mail/index.js';
import type { OutboundHttp } from '../../platform/http/index.js';
import type { StoredRow } from '../filters/index.js';
import type { SecretBox } from '../webhooks/index.js';
import { loadBaseContext } from '../notifications/index.js';
import type { ScopedRowWriter, BaseRef, Actor } from '../rows/index.js';
import { callWebhook, notify, PermanentError, sendEmail, writeRow, type ActionInput } from './actions.js';
import type { AutomationInvalidation } from './invalidation.js';
import { automationApp, OUTBOUND_ACTIONS, ROW_ACTIONS, type ActionOutcome, type AutomationAction } from './model.js';
import { checkAutomation } from './rule-check.js';
import { findAutomation, toAutomation } from './rules.repository.js';
import { claimRun, dueRunIds, updateRun, type RunRow } from './runs.repository.js';

/** The rows module's write entry (RowsService.writeMany), injected by the composition root. */
export type WriteMany = <T>(base: BaseRef, actor: Actor, work: (rows: ScopedRowWriter) => Promise<T>) => Promise<T>;

export interface RunnerDeps {
  db: Db;
  clock: Clock;
  writeMany: WriteMany;
  mailer: Mailer;
  http: OutboundHttp;
  /** Opens `call_webhook` secrets (sealed at rest). */
  secrets: SecretBox;
  invalidation: AutomationInvalidation;
  timeZone: string;
  emailDelayMs: number;
  /** Back-off before each retry of an e-mail or webhook action; its length is the number of retries. */
  retrySchedule: readonly number[];
  log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** A claimed run is not handed to another runner for this long (a crashed runner's run comes back after it). */
const LEASE_MS = 5 * 60_000;
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
          const ids = await dueRunIds(this.deps.db, this.deps.clock.now(), BATCH);
          let ran = 0;
          for (const id of ids) {
            if (this.stopped) break;
            const run = await claimRun(this.deps.db, id, this.deps.clock.now(), LEASE_MS);
            if (!run) continue;
            await this.execute(run);
            ran++;
          }
          total += ran;
          if (ids.length < BATCH || ran === 0) break;
        }
      } while (this.again);
      return total;
    })().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async execute(run: RunRow): Promise<void> {
    const { db, clock } = this.deps;
    const started = clock.now();
    const id = Number(run.id);
    const outcomes = JSON.parse(run.outcomes) as ActionOutcome[];
    const listing = await findAutomation(db, Number(run.rule_id));
    const finish = (patch: { status: string; error: string | null }) =>
      updateRun(db, id, { ...patch, outcomes: JSON.stringify(outcomes), finished_at: clock.now(), next_attempt_at: null, duration_ms: Number(run.duration_ms) + clock.now() - started });
    if (!listing || Number(listing.is_valid) !== 1) return finish({ status: 'failed', error: 'the rule was deleted or is invalid' });
    const rule = toAutomation(listing);
    const context = await loadBaseContext(db, rule.baseId);
    const check = checkAutomation(rule, context.doc, context.members);
    if (!check.ok) {
      await db.transaction().execute((trx) => this.deps.invalidation.invalidate(trx, rule, check.reason));
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
    };
    const actionOf = new Map(rule.actions.map((a) => [a._id, a]));
    const pending = (test: (a: AutomationAction) => boolean) =>
      outcomes.filter((o) => o.status === 'pending' && actionOf.has(o._id) && test(actionOf.get(o._id)!));

    // 1. notify + row writes: one transaction with the run record.
    const inner = pending((a) => !OUTBOUND_ACTIONS.has(a.type));
    if (inner.length > 0) {
      const work = async (trx: Executor, rows: ScopedRowWriter | null) => {
        for (const o of inner) {
          const action = actionOf.get(o._id)!;
          o.detail = ROW_ACTIONS.has(action.type) ? await writeRow(rows!, action, input) : await notify(trx, action, input, this.deps.emailDelayMs);
          o.status = 'done';
        }
        await updateRun(trx, id, { outcomes: JSON.stringify(outcomes) });
      };
      try {
        if (inner.some((o) => ROW_ACTIONS.has(actionOf.get(o._id)!.type))) {
          const actor: Actor = { user: creator[0], app: automationApp(rule.id, Number(run.depth)), userId: rule.creatorId };
          await this.deps.writeMany({ id: rule.baseId, uuid: rule.dtableUuid }, actor, (rows) => work(rows.trx, rows));
        } else {
          await db.transaction().execute((trx) => work(trx, null));
        }
      } catch (error) {
        // Rolled back as a whole: nothing was written, so nothing is written twice. Not retried.
        const message = errorText(error);
        for (const o of inner) Object.assign(o, { status: 'failed', error: message, detail: undefined });
        this.deps.log.warn({ ruleId: rule.id, runId: id, err: message }, 'automation row actions failed');
      }
    }

    // 2. outbound actions, each retried with back-off.
    const attempt = Number(run.attempts) + 1;
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

    const now = clock.now();
    const duration = Number(run.duration_ms) + now - started;
    if (outcomes.some((o) => o.status === 'pending')) {
      const delay = this.deps.retrySchedule[Math.min(attempt - 1, this.deps.retrySchedule.length - 1)] ?? 60_000;
      await updateRun(db, id, { outcomes: JSON.stringify(outcomes), attempts: attempt, next_attempt_at: now + delay, duration_ms: duration });
      return;
    }
    const failed = outcomes.find((o) => o.status === 'failed');
    await updateRun(db, id, {
      outcomes: JSON.stringify(outcomes),
      attempts: attempt,
      status: failed ? 'failed' : 'done',
      error: failed ? `${failed.type} ${failed._id}: ${failed.error ?? 'failed'}` : null,
      finished_at: now,
      next_attempt_at: null,
      duration_ms: duration,
    });
  }
}

function errorText(error: unknown): string {
  if (error && typeof error === 'object' && 'body' in error) {
    const body = (error as { body?: { error_msg?: unknown } }).body;
    if (typeof body?.error_msg === 'string') return body.error_msg;
  }
  return error instanceof Error ? error.message : String(error);
}
