import type { RowIndexes } from '../rows/index.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config/index.js';
import type { Db, DialectName, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { createMailer, type Mailer } from '../../platform/mail/index.js';
import type { SharesService } from '../workspaces/index.js';
import type { BaseAccess } from '../access/index.js';
import { notificationAdminRoutes } from './admin.routes.js';
import { DeadlineScan } from './deadline-scan.js';
import { EmailDigest } from './email-digest.js';
import { inboxRoutes } from './inbox.routes.js';
import { InboxService } from './inbox.service.js';
import { RuleInvalidation } from './invalidation.js';
import { notifyUser, type NotifyUserInput } from './notify.js';
import { noticeSelectedCollaborators } from './collaborator-notices.js';
import type { NewChangeEvent } from '../events/index.js';
import { RuleEventConsumer } from './rule-consumer.js';
import { notificationRulesRoutes } from './rules.routes.js';
import { NotificationRulesService } from './rules.service.js';

export { notifyUser } from './notify.js';
export { baseNotice } from './present.js';
export type { NotifyUserInput } from './notify.js';
export { acquireLease, releaseLease } from './leases.repository.js';
export { MSG_TYPE_RULE, MSG_TYPE_RULE_INVALID } from './rules.model.js';
export { MSG_TYPE_SELECTED_COLLABORATOR } from './collaborator-notices.js';
export type { NotificationRulesService } from './rules.service.js';
export type { InboxService } from './inbox.service.js';
export type { DeadlineScan, DeadlineScanReport } from './deadline-scan.js';
export type { EmailDigest, EmailDigestReport } from './email-digest.js';
export type { RuleInvalidation } from './invalidation.js';
// The rule engine's shared half, used by automation rules (one engine serves both).
export { triggerMatch, storedRowOf, recipientsFor } from './engine.js';
export { prepareRule, type PreparedRule } from './rule-check.js';
export { loadBaseContext, loadBaseContexts, nameLookup, type BaseContext } from './base-context.js';
export { metadataVersion } from './base-context.repository.js';
export { renderMessage, type TemplateContext } from './templating.js';
export { writeNotices, type Notice } from './notify.js';
export { matchingRows, matchingRowsPage } from './deadline.repository.js';
export type { MatchRead } from './deadline.repository.js';
export { nextRunAt, localDay } from './zoned-time.js';
export { deadlineWhere } from './deadline-scan.js';
export { RuleAdmin, ADMIN_MAX_PER_PAGE } from './rule-admin.js';
export { triggerTarget, updateFields, deadlineFields, conjunctionOf, integerField, objectOf, fail as invalidField, filterColumns } from './rules.validation.js';
export { columnByKey, columnByName, tableById, viewById, USER_COLUMN_TYPES, type MetaDoc, type MetaTable, type MetaColumn } from './metadata-doc.js';
export type { Rule, RuleTrigger, Members, Member, TriggerCondition } from './rules.model.js';

/** A scheduled job for `src/workers/scheduler.ts` (croner pattern with seconds, evaluated in TIME_ZONE). */
export interface NotificationTick {
  name: string;
  pattern: string;
  /** How long the lease is held at most; a crashed run frees the tick after this. */
  leaseMs: number;
  run(now: number): Promise<unknown>;
}

export interface NotificationsModule {
  rules: NotificationRulesService;
  inbox: InboxService;
  consumer: RuleEventConsumer;
  deadlines: DeadlineScan;
  digest: EmailDigest;
  invalidation: RuleInvalidation;
  mailer: Mailer;
  /** `notifyUser` with the container's clock and NOTIFICATION_EMAIL_DELAY_MINUTES filled in. */
  notifyUser(trx: Executor, input: Omit<NotifyUserInput, 'now' | 'emailDelayMs'>): Promise<boolean>;
  /** In a row write's transaction: `selected_collaborator` notices for users newly put into collaborator cells. */
  noticeSelectedCollaborators(trx: Executor, events: NewChangeEvent[], now: number): Promise<void>;
  /** Hourly deadline scan, the e-mail digest every five minutes, the structure re-check. */
  ticks: NotificationTick[];
  routes: FastifyPluginAsyncTypebox;
  /** Where failures of background work are logged (the server passes its pino logger). */
  useLogger(log: Log): void;
  close(): void;
}

type Log = { error(obj: object, msg: string): void };

export interface NotificationsDeps {
  config: Config;
  db: Db;
  dialect: DialectName;
  clock: Clock;
  access: BaseAccess;
  shares: SharesService;
  /** Default: SMTP_URL, else JSON lines under DATA_DIR/mail/. */
  mailer?: Mailer;
  /** The row indexes (rows module): a deadline scan's date column gets one on a big table. */
  rowIndexes?: RowIndexes;
  log?: Log;
}

const MINUTE = 60_000;

export function createNotifications(deps: NotificationsDeps): NotificationsModule {
  const { config, db, dialect, clock } = deps;
  let target: Log | undefined = deps.log;
  const log: Log = { error: (obj, msg) => target?.error(obj, msg) };
  const emailDelayMs = config.notificationEmailDelayMinutes * MINUTE;
  const dedupWindowMs = config.notificationDedupMinutes * MINUTE;
  const mailer = deps.mailer ?? createMailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, dataDir: config.dataDir, now: () => clock.now() });
  const rules = new NotificationRulesService(db, clock, deps.access, config.timeZone);
  const inbox = new InboxService(db);
  const invalidation = new RuleInvalidation(db, clock, emailDelayMs, log);
  const consumer = new RuleEventConsumer(clock, invalidation, { timeZone: config.timeZone, dedupWindowMs, emailDelayMs });
  const deadlines = new DeadlineScan(db, dialect, clock, invalidation, {
    timeZone: config.timeZone,
    emailDelayMs,
    markRetentionMs: Math.max(dedupWindowMs, 3 * 24 * 60 * MINUTE),
    log,
    ...(deps.rowIndexes ? { rowIndexes: deps.rowIndexes } : {}),
  });
  const digest = new EmailDigest(db, clock, mailer, { publicUrl: config.publicUrl, log });

  // A user losing access to a base invalidates the rules that list them.
  deps.shares.onShareChanged((baseId) => invalidation.recheckBaseSafely(baseId));

  const ticks: NotificationTick[] = [
    { name: 'notification-deadlines', pattern: '0 0 * * * *', leaseMs: 30 * MINUTE, run: (now) => deadlines.run(now) },
    { name: 'notification-email', pattern: '0 */5 * * * *', leaseMs: 10 * MINUTE, run: (now) => digest.run(now) },
    { name: 'notification-rule-check', pattern: '30 */5 * * * *', leaseMs: 10 * MINUTE, run: () => invalidation.sweepChangedBases() },
  ];

  const routes: FastifyPluginAsyncTypebox = async (app) => {
    await app.register(notificationRulesRoutes(rules));
    await app.register(notificationAdminRoutes(rules));
    await app.register(inboxRoutes(inbox));
  };

  return {
    rules,
    inbox,
    consumer,
    deadlines,
    digest,
    invalidation,
    mailer,
    notifyUser: (trx, input) => notifyUser(trx, { ...input, now: clock.now(), emailDelayMs }),
    noticeSelectedCollaborators: (trx, events, now) => noticeSelectedCollaborators(trx, events, now, emailDelayMs),
    ticks,
    routes,
    useLogger: (next) => {
      target = next;
    },
    close: () => mailer.close(),
  };
}
export { basesWithUpdateRulesIn, countRulesIn, deleteInvalidRulesIn, deleteRuleIn, findRuleIn, listBaseRulesIn, updateRulesOf, validRulesOfBaseIn, type RuleTableName, type RuleListingOf } from './rule-store.js';
