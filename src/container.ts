import { apiError } from './shared/errors.js';
import type { Config } from './config/index.js';
import { connect, type Db, type DbHandle, type DialectName } from './db/index.js';
import { systemClock, type Clock } from './shared/clock.js';
import { AccountsService } from './modules/accounts/index.js';
import { BasesService, ExternalLinksService, SharesService } from './modules/workspaces/index.js';
import { createGroupsModule, type GroupsModule } from './modules/groups/index.js';
import { ImportJobs } from './modules/transfer/index.js';
import { BaseAccess } from './modules/access/index.js';
import { createTokensModule, type AccessTokenService, type BaseTokenVerifier, type TokensModule } from './modules/tokens/index.js';
import { Dispatcher } from './modules/outbox/index.js';
import { actorOfClaims, applyLiveOperation, configureSizeLimits, createBaseData, DEFAULT_NEAR_IDS, DEFAULT_THREAD_READ_MIN_ROWS, purgeBaseRows, registerRowsMetrics, ROW_LIMITS, volatileFormulaTick, type BaseData } from './modules/rows/index.js';
import { SqlService, SqlThreads, sqliteFileOf } from './modules/sql/index.js';
import { FormulaThreads } from './modules/formulas/index.js';
import { createLimits, type Limits } from './modules/limits/index.js';
import { createMetrics, type Metrics } from './platform/metrics.js';
import { createRedis, type Redis } from './platform/redis.js';
import { createWebhooksModule, type WebhooksModule } from './modules/webhooks/index.js';
import { ChangeFeed, CommitSignal } from './modules/subscriptions/index.js';
import { createNotifications, type NotificationsModule } from './modules/notifications/index.js';
import { Scheduler } from './workers/scheduler.js';
import { createRealtime, type Realtime } from './modules/realtime/index.js';
import { configureTimeZone } from './shared/dates/index.js';
import { createAssets, FileBlobs, type AssetsModule } from './modules/assets/index.js';
import { createNatsStream, type NatsStream } from './modules/nats/index.js';
import { createHistory, purgeBaseHistory, type HistoryModule } from './modules/history/index.js';
import { deleteBaseComments } from './modules/comments/index.js';
import { ArchiveService } from './modules/transfer/index.js';
import { createAutomations, type AutomationsModule } from './modules/automations/index.js';
import { AuditService } from './modules/audit/index.js';
import { OidcService } from './modules/sso/index.js';

/** Everything the app and the workers share, built once. Tests pass their own clock or database. */
export interface Container {
  config: Config;
  db: Db;
  dialect: DialectName;
  /** The connection handle behind `db` (its logger, health). */
  database: DbHandle;
  clock: Clock;
  accounts: AccountsService;
  access: BaseAccess;
  bases: BasesService;
  shares: SharesService;
  links: ExternalLinksService;
  /** Groups, their members and workspaces, bases shared with groups, views shared with users or groups. */
  groups: GroupsModule;
  accessTokens: AccessTokenService;
  baseTokens: BaseTokenVerifier;
  /** API-Tokens, temporary API-Tokens, Base-Tokens and their revocation. */
  tokens: TokensModule;
  /** Hands committed change events to registered consumers (webhooks, notification rules). */
  dispatcher: Dispatcher;
  /** The base data API: tables, columns, views, rows, links; writes append change events. */
  baseData: BaseData;
  /** SQL over a base (POST …/sql/); writes go through `baseData.rows`. */
  sql: SqlService;
  /** Records of the CSV/XLSX imports in progress; `recover()` undoes those whose process died. */
  importJobs: ImportJobs;
  /** Prometheus registry behind GET /metrics; modules add their counters to `metrics.registry`. */
  metrics: Metrics;
  /** The shared Redis connection when REDIS_URL is set (fails fast while Redis is away). */
  redis: Redis | null;
  /** Rate limiter, per-base overrides and the base-key cache. */
  limits: Limits;
  /** Webhook CRUD, the delivery log, the event consumer and the delivery worker (`webhooks.deliverer`). */
  webhooks: WebhooksModule;
  /** The change feed (`GET …/changes/`) over the outbox; its retention prune runs daily. */
  changeFeed: ChangeFeed;
  /** Notification rules, the engine (an event consumer), deadline reminders, the inbox, the e-mail digest. */
  notifications: NotificationsModule;
  /** Scheduled ticks (deadline reminders, e-mail digest) under database leases; `runOnce(name)` in tests. */
  scheduler: Scheduler;
  /** The live channel (socket.io): `update-dtable` from the outbox, `new-notification`, ui-toasts. */
  realtime: Realtime;
  /** File and image storage (local disk or S3) behind the asset endpoints, import and export. */
  assets: AssetsModule;
  /** The change stream to NATS JetStream when EVENTS_NATS_URL is set (an `outside` outbox consumer). */
  nats: NatsStream | null;
  /** The operation log (filled in each write's transaction), row history, restore. */
  history: HistoryModule;
  /** Automation rules: CRUD, the consumer that queues runs, the runner (actions after the commit), periodic rules. */
  automations: AutomationsModule;
  /** The hash-chained audit log (`audit.record`, verify, prune); the HTTP trail is `plugins/audit-trail.ts`. */
  audit: AuditService;
  /** OpenID Connect sign-in, when OIDC_ISSUER is set. */
  oidc: OidcService | null;
  close(): Promise<void>;
}

export interface ContainerOptions {
  clock?: Clock;
  database?: DbHandle;
}

export function createContainer(config: Config, options: ContainerOptions = {}): Container {
  const handle =
    options.database ??
    connect({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      connectTimeoutMs: config.databaseConnectTimeoutMs,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      pgParallelWorkers: config.pgParallelWorkers,
      pgJit: config.pgJit,
    });
  const db = handle.db;
  const clock = options.clock ?? systemClock;
  const accounts = new AccountsService(db, clock, config.secretKey, { twoFactorDeviceRememberDays: config.security.twoFactorDeviceRememberDays });
  const access = new BaseAccess(db);
  const groups = createGroupsModule({ db, dialect: handle.dialect, clock, access, accounts, maxMembers: config.groupMaxMembers });
  const bases = new BasesService(db, clock, access, accounts, config.trashRetentionDays, groups.moves);
  const shares = new SharesService(db, clock, access, accounts);
  const links = new ExternalLinksService(db, clock, access);
  const tokens = createTokensModule({ db, clock, config, access, accounts, bases, shares, links, groups: groups.revocation });
  const dispatcher = new Dispatcher(db, handle.dialect, clock);
  const metrics = createMetrics();
  const webhooks = createWebhooksModule({
    db,
    dialect: handle.dialect,
    clock,
    config,
    access,
    registry: metrics.registry,
    // Called only when a delivery disables a webhook, long after `notifications` below exists.
    notify: (trx, notice) => notifications.notifyUser(trx, notice),
  });
  dispatcher.register(webhooks.consumer);
  const redis = config.redisUrl ? createRedis(config.redisUrl, { name: 'shared', clock }) : null;
  const baseData = createBaseData(db, handle.dialect, clock, () => dispatcher.wake(), handle.externalChanges, handle.revisionChannel);
  baseData.writer.timeZone = config.timeZone;
  baseData.writer.concurrentAppends = config.pgConcurrentAppends;
  registerRowsMetrics(metrics.registry, baseData);
  baseData.writer.formulas = new FormulaThreads({ threads: config.security.formulaThreads, timeoutMs: config.security.formulaBatchTimeoutMs });
  configureTimeZone(config.timeZone);
  bases.onBaseChanged((base) => baseData.snapshots.evict(base.id));
  accounts.onUserDeleting(async (userId) => {
    const { owned } = await access.basesOfUser(userId);
    return () => owned.forEach((base) => baseData.snapshots.evict(base.id));
  });
  const assets = createAssets(config, clock);
  bases.onBaseCopied((source, copy) => assets.service.copyBase(source.uuid, copy.uuid));
  const notifications = createNotifications({ config, db, dialect: handle.dialect, clock, access, shares, rowIndexes: baseData.indexes });
  dispatcher.register(notifications.consumer);
  // A deleted or retyped table, view or column invalidates the rules using it at once.
  baseData.writer.onStructureChanged((base) => notifications.invalidation.recheckBaseSafely(base.id));
  const automations = createAutomations({
    config,
    db,
    dialect: handle.dialect,
    clock,
    access,
    writeMany: (base, actor, work) => baseData.rows.writeMany(base, actor, work),
    reads: baseData.rows,
    mailer: notifications.mailer,
    rowIndexes: baseData.indexes,
  });
  dispatcher.register(automations.consumer);
  baseData.writer.onStructureChanged((base) => automations.invalidation.recheckBaseSafely(base.id));
  const limits = createLimits({ config, db, clock, access, metrics, redis });
  // After the notification consumer: its batch has committed when this one runs (new-notification).
  const realtime = createRealtime({
    db,
    dialect: handle.dialect,
    clock,
    verifier: tokens.verifier,
    config,
    applyOperation: async ({ claims, base }, op, writeId) => {
      // A live operation spends the base's budget as a gateway request does (RATE_LIMIT_BASE_PER_MINUTE).
      const spent = await limits.service.check('base', { kind: 'base', uuid: base.uuid });
      if (spent.kind === 'counted' && !spent.decision.allowed) throw apiError(429, 'Too many requests: the base’s rate limit is spent.');
      return applyLiveOperation(baseData.rows, { id: base.id, uuid: base.uuid }, { ...actorOfClaims(claims), writeId }, op);
    },
  });
  dispatcher.register(realtime.consumer);
  baseData.writer.onStructureChanged(async () => realtime.wakeStructure());
  const nats = config.eventsNats ? createNatsStream({ config: config.eventsNats, db, clock, registry: metrics.registry }) : null;
  if (nats) dispatcher.register(nats.consumer);
  baseData.writer.onCommitted((base) => realtime.wakeConsumer(base.id));
  baseData.writer.beforeCommit((trx, events, now) => notifications.noticeSelectedCollaborators(trx, events, now));
  const scheduler = new Scheduler(db, clock, { timeZone: config.timeZone });
  const sec = config.security;
  configureSizeLimits(sec);
  const sqlThreads = new SqlThreads({
    threads: sec.sqlReaderThreads,
    timeoutMs: sec.sqlTimeoutMs,
    sqliteFile: () => (handle.dialect === 'sqlite' ? sqliteFileOf(db) : Promise.resolve(null)),
    sqliteSnapshot: handle.snapshot,
  });
  // Listing reads of big SQLite tables that may scan run on the same threads, under each base's share (rows/thread-reads.ts).
  baseData.rows.threadReads = { threads: sqlThreads, timeoutMs: config.databaseStatementTimeoutMs, minRows: DEFAULT_THREAD_READ_MIN_ROWS, nearIds: DEFAULT_NEAR_IDS };
  const sqlCost = { maxStatementBytes: sec.sqlMaxStatementBytes, maxPredicateTerms: sec.sqlMaxPredicateTerms, maxInValues: sec.sqlMaxInValues, timeoutMs: sec.sqlTimeoutMs };
  for (const tick of notifications.ticks) scheduler.register(tick);
  for (const tick of webhooks.ticks) scheduler.register(tick);
  for (const tick of automations.ticks) scheduler.register(tick);
  scheduler.register(volatileFormulaTick(db, baseData.writer));
  // Snapshots are whole-base archives (the transfer module's export-dtable format); their files are kept apart as blobs.
  const snapshotArchives = new ArchiveService(db, bases, assets.service, (baseId) => baseData.snapshots.evict(baseId), {
    zip: { maxUncompressedBytes: 20 * config.assets.maxBytes, maxRatio: 200, maxEntries: 10_000 },
    tmpDir: config.assets.tmpDir,
  });
  const history = createHistory({
    db,
    clock,
    access,
    baseData,
    retentionDays: config.operationLogRetentionDays,
    trashRetentionDays: config.trashRetentionDays,
    files: {
      remove: async (baseId, paths) => {
        const base = await access.findById(baseId);
        if (base) await assets.service.removeFiles(base.uuid, paths);
      },
    },
    snapshots: {
      archives: { export: (base, out) => snapshotArchives.export(base, false, out), import: (user, workspaceId, file, name) => snapshotArchives.import(user, workspaceId, file, name, name) },
      blobs: new FileBlobs(assets.storage, config.assets.tmpDir),
      tmpDir: config.assets.tmpDir,
      // Held in memory while taken: bounded.
      maxBytes: Math.min(20 * config.assets.maxBytes, 256 * 1024 * 1024),
    },
  });
  for (const tick of history.ticks) scheduler.register(tick);
  // A purged base's bulk data goes 1,000 per short statement before its row (whose cascade would hold locks over all of it).
  bases.onBasePurge(async (baseId) => {
    // Its group sets first: the rows' deletes then feed no set.
    await baseData.groupSets.dropBase(baseId);
    await baseData.indexes.blocks.dropBase(baseId);
    await purgeBaseRows(db, baseId, 1000);
    while ((await deleteBaseComments(db, baseId, 1000)) === 1000);
    await purgeBaseHistory(db, baseId, 1000);
  });
  // Then its files, still before its row: a purge that stops before or during this is found and run
  // again by the next tick (after the row, nothing would name the base's files any more).
  bases.onBasePurge((_baseId, base) => assets.service.removeBase(base.uuid));
  const importJobs = new ImportJobs(db, handle.dialect, clock, baseData, bases, access);
  // At start-up (server.ts) and then every 5 minutes: imports of another instance that died meanwhile.
  scheduler.register({ name: 'import-recovery', pattern: '0 */5 * * * *', leaseMs: 10 * 60_000, run: () => importJobs.recover() });
  scheduler.register({ name: 'base-trash-purge', pattern: '0 23 * * * *', leaseMs: 30 * 60_000, run: (now) => bases.trash.purgeExpired(now) });
  // The change feed's readers wake on commits here and (PostgreSQL) on other instances' revisions.
  const commits = new CommitSignal();
  baseData.writer.onCommitted((base) => commits.notify(base.id));
  handle.revisionChannel?.onChange((baseId) => commits.notify(baseId));
  const changeFeed = new ChangeFeed({ db, clock, timeZone: config.timeZone, retentionDays: config.changeFeedRetentionDays, signal: commits, consumerNames: () => dispatcher.consumerNames() });
  const audit = new AuditService(db, clock, config.auditLogRetentionDays);
  const oidc = config.oidc ? new OidcService(db, clock, config.oidc, accounts) : null;
  // Off the request path: a known (token, address) pair costs nothing; a new one writes an audit row.
  tokens.apiTokens.onUse((id, ip) => void audit.tokenUsedFrom(id, ip)?.catch((error: unknown) => console.error('audit record failed', error)));
  // Rows a stopped or crashed instance left unsealed (each instance seals its own appends at once).
  scheduler.register({ name: 'audit-seal', pattern: '30 * * * * *', leaseMs: 60_000, run: () => audit.seal() });
  scheduler.register({ name: 'audit-log-prune', pattern: '0 47 3 * * *', leaseMs: 30 * 60_000, run: (now) => audit.prune(now) });
  scheduler.register({ name: 'change-feed-prune', pattern: '0 41 3 * * *', leaseMs: 30 * 60_000, run: (now) => changeFeed.prune(now) });
  return {
    config,
    db,
    dialect: handle.dialect,
    database: handle,
    clock,
    accounts,
    access,
    bases,
    shares,
    groups,
    links,
    accessTokens: tokens.accessTokens,
    baseTokens: tokens.verifier,
    tokens,
    dispatcher,
    baseData,
    sql: new SqlService({ db, dialect: handle.dialect, writer: baseData.rows, limits: ROW_LIMITS, links: baseData.links, cost: sqlCost, threads: sqlThreads, timeZone: config.timeZone, clock, rowIndexes: baseData.indexes, groupSets: baseData.groupSets }),
    importJobs,
    metrics,
    redis,
    limits,
    webhooks,
    changeFeed,
    notifications,
    scheduler,
    realtime,
    assets,
    nats,
    history,
    automations,
    audit,
    oidc,
    close: async () => {
      await scheduler.stop();
      changeFeed.close();
      await dispatcher.stop();
      await nats?.close();
      await realtime.close();
      notifications.close();
      await automations.close();
      await webhooks.close();
      await tokens.close();
      await sqlThreads.close();
      await baseData.writer.formulas.close();
      await audit.close();
      redis?.disconnect();
      assets.storage.close();
      await handle.close();
    },
  };
}
