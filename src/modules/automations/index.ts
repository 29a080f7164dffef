import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config/index.js';
import type { Db, DialectName } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { SecretBox } from '../webhooks/index.js';
import { createOutboundHttp, type OutboundHttp } from '../../platform/http/index.js';
import type { Mailer } from '../../platform/mail/index.js';
import type { BaseAccess } from '../access/index.js';
import type { RowIndexes } from '../rows/index.js';
import { AutomationConsumer } from './consumer.js';
import { AutomationInvalidation } from './invalidation.js';
import { PeriodicAutomations } from './periodic.js';
import { automationRoutes } from './routes.js';
import { AutomationRulesService } from './rules.service.js';
import { AutomationRunner, type WriteMany } from './runner.js';
import type { RowReads } from './script-client.js';
import { ScriptThreads } from './script-threads.js';

export type { AutomationRulesService } from './rules.service.js';
export type { AutomationRunner } from './runner.js';
export { RunBatchCache } from './run-batch-cache.js';
export type { ScriptThreads } from './script-threads.js';
export { automationSource, automationApp } from './model.js';

type Log = { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };

export interface AutomationsDeps {
  config: Config;
  db: Db;
  dialect: DialectName;
  clock: Clock;
  access: BaseAccess;
  /** The rows module's `writeMany`: every row-writing action goes through it. */
  writeMany: WriteMany;
  /** The rows module's reads, for the `base` client of `run_script`. */
  reads: RowReads;
  /** The notification module's mailer (SMTP_URL or the spool). */
  mailer: Mailer;
  http?: OutboundHttp;
  /** Row indexes: a periodic rule's filtered columns get one when its table is big (rows/row-indexes.ts). */
  rowIndexes?: RowIndexes;
}

export interface AutomationTick {
  name: string;
  pattern: string;
  leaseMs: number;
  run(now: number): Promise<unknown>;
}

export interface AutomationsModule {
  rules: AutomationRulesService;
  consumer: AutomationConsumer;
  runner: AutomationRunner;
  scripts: ScriptThreads;
  periodic: PeriodicAutomations;
  invalidation: AutomationInvalidation;
  ticks: AutomationTick[];
  routes: FastifyPluginAsyncTypebox;
  useLogger(log: Log): void;
  close(): Promise<void>;
}

const MINUTE = 60_000;

export function createAutomations(deps: AutomationsDeps): AutomationsModule {
  const { config, db, clock } = deps;
  const settings = config.automations;
  let target: Log | undefined;
  const log: Log = { error: (o, m) => target?.error(o, m), warn: (o, m) => target?.warn(o, m) };
  const http = deps.http ?? createOutboundHttp({ timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate });
  const emailDelayMs = config.notificationEmailDelayMinutes * MINUTE;
  const invalidation = new AutomationInvalidation(db, clock, emailDelayMs, log);
  const secrets = new SecretBox(config.secretKey);
  const scripts = new ScriptThreads();
  const rules = new AutomationRulesService(db, clock, deps.access, { timeZone: config.timeZone, maxRulesPerBase: settings.rulesPerBase }, secrets);
  const runner = new AutomationRunner({
    db,
    dialect: deps.dialect,
    clock,
    writeMany: deps.writeMany,
    mailer: deps.mailer,
    http,
    secrets,
    invalidation,
    scripts,
    reads: deps.reads,
    script: { cpuMs: settings.scriptTimeoutMs, memoryBytes: settings.scriptMemoryMb * 1024 * 1024, msPerMinute: settings.scriptMsPerMinute },
    timeZone: config.timeZone,
    emailDelayMs,
    retrySchedule: settings.retrySchedule,
    log,
  });
  const wake = () => runner.wake();
  const consumer = new AutomationConsumer(clock, invalidation, { timeZone: config.timeZone, runsPerMinute: settings.runsPerMinute, maxDepth: settings.maxDepth }, log, wake);
  const periodic = new PeriodicAutomations(db, deps.dialect, clock, invalidation, { timeZone: config.timeZone, maxRows: settings.periodicMaxRows, log, rowIndexes: deps.rowIndexes }, wake);
  const ticks: AutomationTick[] = [
    { name: 'automation-periodic', pattern: '5 0 * * * *', leaseMs: 30 * MINUTE, run: (now) => periodic.run(now) },
    // Retries of e-mail and webhook actions, and runs left by a stopped instance.
    { name: 'automation-retries', pattern: '15 * * * * *', leaseMs: 10 * MINUTE, run: () => runner.runDue() },
  ];
  return {
    rules,
    consumer,
    runner,
    scripts,
    periodic,
    invalidation,
    ticks,
    routes: automationRoutes(rules),
    useLogger: (next) => {
      target = next;
    },
    close: async () => {
      await runner.stop();
      await scripts.close();
      if (!deps.http) await http.close();
    },
  };
}
