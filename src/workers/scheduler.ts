import { randomUUID } from 'node:crypto';
import { Cron } from 'croner';
import type { Db } from '../db/index.js';
import type { Clock } from '../shared/clock.js';
import { acquireLease, releaseLease } from '../modules/notifications/index.js';

/** A job run on a croner schedule (pattern with seconds), at most by one instance at a time. */
export interface ScheduledTick {
  name: string;
  pattern: string;
  /** Upper bound of a run; a crashed holder's lease frees the tick after this long. */
  leaseMs: number;
  run(now: number): Promise<unknown>;
}

export interface SchedulerOptions {
  /** Zone the patterns are evaluated in (TIME_ZONE), so "every hour" follows local hours. */
  timeZone: string;
  log?: { error(obj: object, msg: string): void; info?(obj: object, msg: string): void };
}

export type TickOutcome = { ran: true; result: unknown } | { ran: false; reason: 'unknown' | 'busy' | 'leased' };

/**
 * Runs scheduled ticks (hourly deadline reminders, the e-mail digest, …). Each run first takes the
 * tick's lease row in the database, so with several scheduler instances only one runs a given tick;
 * the others skip it. Logic lives in the modules; this only times, leases and logs.
 */
export class Scheduler {
  private readonly ticks = new Map<string, ScheduledTick>();
  private readonly running = new Map<string, Promise<TickOutcome>>();
  private readonly jobs: Array<{ name: string; job: Cron }> = [];
  /** Identifies this instance as a lease holder. */
  readonly holder = randomUUID();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly options: SchedulerOptions,
  ) {}

  register(tick: ScheduledTick): void {
    if (this.ticks.has(tick.name)) throw new Error(`tick ${tick.name} is already registered`);
    this.ticks.set(tick.name, tick);
  }

  tickNames(): string[] {
    return [...this.ticks.keys()];
  }

  useLogger(log: NonNullable<SchedulerOptions['log']>): void {
    this.options.log = log;
  }

  start(): void {
    if (this.jobs.length > 0) return;
    for (const tick of this.ticks.values()) {
      const job = new Cron(tick.pattern, { timezone: this.options.timeZone, protect: true, unref: true }, async () => {
        await this.runOnce(tick.name);
      });
      this.jobs.push({ name: tick.name, job });
    }
  }

  /** When each started tick fires next (empty before `start`); for status pages and logs. */
  nextRuns(): Record<string, Date | null> {
    return Object.fromEntries(this.jobs.map(({ name, job }) => [name, job.nextRun()]));
  }

  /** Stops the timers and waits for runs in flight. */
  async stop(): Promise<void> {
    for (const { job } of this.jobs.splice(0)) job.stop();
    await Promise.allSettled([...this.running.values()]);
  }

  /** Runs one tick now (tests call this with a ManualClock). Never throws; failures are logged. */
  runOnce(name: string): Promise<TickOutcome> {
    const tick = this.ticks.get(name);
    if (!tick) return Promise.resolve({ ran: false, reason: 'unknown' });
    if (this.running.has(name)) return Promise.resolve({ ran: false, reason: 'busy' });
    const run = this.runLeased(tick).finally(() => this.running.delete(name));
    this.running.set(name, run);
    return run;
  }

  private async runLeased(tick: ScheduledTick): Promise<TickOutcome> {
    const started = this.clock.now();
    let leased = false;
    try {
      leased = await acquireLease(this.db, tick.name, this.holder, started, tick.leaseMs);
      if (!leased) return { ran: false, reason: 'leased' };
      const result = await tick.run(started);
      return { ran: true, result };
    } catch (error) {
      this.options.log?.error({ err: error, tick: tick.name }, 'scheduled tick failed');
      return { ran: true, result: { error: error instanceof Error ? error.message : String(error) } };
    } finally {
      if (leased) await releaseLease(this.db, tick.name, this.holder, this.clock.now()).catch(() => undefined);
    }
  }
}
