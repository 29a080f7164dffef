import { changeFeedRoutes } from './modules/subscriptions/index.js';
import Fastify, { type FastifyInstance, type FastifyServerOptions, type RouteOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Container } from './container.js';
import { VERSION } from './version.js';
import { authPlugin } from './plugins/auth.js';
import { baseAuthPlugin } from './plugins/base-auth.js';
import { bodyParsersPlugin } from './plugins/body-parsers.js';
import { DEFAULT_JSON_SHAPE } from './plugins/json-shape.js';
import { errorHandlerPlugin } from './plugins/error-handler.js';
import { clientErrorHandler, frameworkErrors, requestId } from './plugins/framework-errors.js';
import { loggerOptions } from './plugins/logging.js';
import { openApiPlugin } from './plugins/openapi.js';
import { metricsRoutes } from './plugins/metrics.js';
import { rateLimitPlugin } from './plugins/rate-limit.js';
import { textGuardPlugin } from './plugins/text-guard.js';
import { securityHeadersPlugin } from './plugins/security-headers.js';
import { metricsGuardPlugin } from './plugins/metrics-guard.js';
import { passwordThrottlePlugin } from './plugins/password-throttle.js';
import { limitsRoutes, PasswordThrottleService } from './modules/limits/index.js';
import { accountsRoutes, passwordResetRoutes, twoFactorRoutes } from './modules/accounts/index.js';
import { loadMetadata, rowsRoutes } from './modules/rows/index.js';
import { sqlRoutes } from './modules/sql/index.js';
import { systemRoutes } from './modules/system/index.js';
import { healthRoutes } from './modules/system/index.js';
import { shutdownPlugin } from './plugins/shutdown.js';
import { connectionLimits, unreadBodyPlugin } from './plugins/connection-limits.js';
import { isDatabaseReady } from './db/index.js';
import { tokensRoutes } from './modules/tokens/index.js';
import { auditRoutes } from './modules/audit/index.js';
import { ssoRoutes } from './modules/sso/index.js';
import { auditTrailPlugin } from './plugins/audit-trail.js';
import { workspacesRoutes } from './modules/workspaces/index.js';
import { groupsRoutes, sharingRoutes } from './modules/groups/index.js';
import { webhooksRoutes } from './modules/webhooks/index.js';
import { CollaboratorsService, collaboratorsRoutes } from './modules/collaborators/index.js';
import { webConsolePlugin } from './plugins/web-console.js';
import { createCommentsRoutes } from './modules/comments/index.js';
import { lazySchemaCompilers } from './plugins/lazy-schema-compilers.js';
import { adminWebhooksRoutes } from './modules/webhooks/index.js';
import { assetsRoutes, BaseGuard } from './modules/assets/index.js';
import { archiveRoutes, ArchiveService, exportRoutes, importRoutes, ImportService } from './modules/transfer/index.js';

export interface BuildAppOptions {
  /** false silences request logs (tests); default: pino at LOG_LEVEL. */
  logger?: boolean;
  /** Where log lines go (default stdout); tests capture them to prove secrets stay out. */
  logStream?: { write(line: string): void };
  /**
   * Benchmarks only (the baseline of bench/security-write.bench.ts, "scopes and audit off"): no audit
   * trail hooks, and no per-use work for API-Tokens (request counts, last address, new-network check).
   * The server never sets it.
   */
  withoutAudit?: boolean;
  /** Told of every error answered with a bare 500 (logged too): tests print them, as their app logs nothing. */
  onServerError?: (error: unknown) => void;
  /** Told of every route as it is added (tests: the route-walking scope matrix, test/http/tokens-scope-walk.test.ts). */
  onRoute?: (route: RouteOptions) => void;
}

/** Registers infrastructure plugins, then every module's routes. No logic lives here. */
export async function buildApp(c: Container, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const serverOptions: FastifyServerOptions = {
    logger: options.logger === false ? false : loggerOptions(c.config.logLevel, options.logStream),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    bodyLimit: c.config.bodyLimitBytes,
    trustProxy: c.config.trustProxy,
    // The client's X-Request-Id only when it is a short safe token (plugins/framework-errors.ts).
    requestIdHeader: false,
    genReqId: requestId,
    frameworkErrors,
    clientErrorHandler,
    return503OnClosing: false, // shutdownPlugin answers with the API's 503 body
    ...connectionLimits(c.config),
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: true, useDefaults: true, allErrors: false } },
    // Route schemas compile on first use, not at start (plugins/lazy-schema-compilers.ts).
    schemaController: { compilersFactory: lazySchemaCompilers() },
  };
  const app = Fastify(serverOptions).withTypeProvider<TypeBoxTypeProvider>();
  if (options.onRoute) app.addHook('onRoute', options.onRoute);

  // Echo the request id so a client can quote it when reporting a problem.
  // (A callback hook: no promise per request on the hot path.)
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  await app.register(errorHandlerPlugin, options.onServerError ? { onServerError: options.onServerError } : {});
  await app.register(shutdownPlugin);
  await app.register(unreadBodyPlugin);
  // Text no database can store is refused before any database work.
  await app.register(textGuardPlugin);
  await app.register(securityHeadersPlugin);
  if (c.config.security.metricsToken) await app.register(metricsGuardPlugin, { token: c.config.security.metricsToken });
  // Before the auth plugins, so the limiter runs before any token check.
  await app.register(rateLimitPlugin, { limits: c.limits, accounts: c.accounts, verifier: c.baseTokens });
  await app.register(bodyParsersPlugin, { bodyLimit: c.config.bodyLimitBytes, jsonShape: { ...DEFAULT_JSON_SHAPE, maxObjectKeys: c.config.bodyMaxObjectKeys } });
  await app.register(openApiPlugin, { version: VERSION, publicUrl: c.config.publicUrl });
  await app.register(authPlugin, { accounts: c.accounts });
  const audited = options.withoutAudit !== true;
  await app.register(baseAuthPlugin, { verifier: c.baseTokens, trustProxy: c.config.trustProxy, tablesOf: async (baseId) => (await loadMetadata(c.db, baseId)).tables, ...(audited ? { onApiTokenUse: (id: number, ip: string) => c.tokens.apiTokens.countUse(id, ip) } : {}) });
  // Before the routes: it marks the audited ones as they are added (plugins/audit-trail.ts).
  if (audited) await app.register(auditTrailPlugin, { audit: c.audit });
  const { loginFailuresBeforeDelay, loginMaxDelaySeconds } = c.config.security;
  await app.register(passwordThrottlePlugin, {
    // Shared through Redis when REDIS_URL is set (docs/security.md).
    throttle: new PasswordThrottleService(c.clock, { failuresBeforeDelay: loginFailuresBeforeDelay, maxDelaySeconds: loginMaxDelaySeconds }, c.metrics, c.redis),
  });

  await app.register(systemRoutes({ version: VERSION, edition: c.config.edition }));
  await app.register(healthRoutes({ databaseReady: () => isDatabaseReady(c.db, c.config.databaseConnectTimeoutMs) }));
  await app.register(metricsRoutes(c.metrics));
  await app.register(limitsRoutes(c.limits, c.config.edition));
  await app.register(accountsRoutes(c.accounts));
  await app.register(passwordResetRoutes(c.accounts));
  await app.register(twoFactorRoutes(c.accounts));
  await app.register(ssoRoutes(c.oidc));
  await app.register(
    workspacesRoutes({ bases: c.bases, shares: c.shares, links: c.links, clock: c.clock, publicUrl: c.config.publicUrl }),
  );
  await app.register(groupsRoutes(c.groups.groups, c.accounts));
  await app.register(sharingRoutes(c.groups.groupShares, c.groups.viewShares));
  await app.register(tokensRoutes({ accessTokens: c.accessTokens, apiTokens: c.tokens.apiTokens }));
  await app.register(rowsRoutes(c.baseData, c.config.baseBodyLimitBytes));
  await app.register(sqlRoutes(c.sql, c.config.baseBodyLimitBytes));
  await app.register(webhooksRoutes(c.webhooks.service));
  await app.register(changeFeedRoutes(c.changeFeed));
  await app.register(c.notifications.routes);
  await app.register(c.automations.routes);
  await app.register(collaboratorsRoutes({ collaborators: new CollaboratorsService(c.db, c.access), accounts: c.accounts, apiTokens: c.tokens.apiTokens }));
  await c.realtime.attach(app);
  await app.register(webConsolePlugin);
  await app.register(createCommentsRoutes({ db: c.db, clock: c.clock, access: c.access, notify: c.notifications.notifyUser }));
  await app.register(adminWebhooksRoutes(c.db));
  await app.register(c.history.routes);
  await app.register(auditRoutes({ audit: c.audit, access: c.access }));
  const guard = new BaseGuard(c.access, c.accessTokens, c.baseTokens);
  const { maxBytes, tmpDir } = c.config.assets;
  await app.register(assetsRoutes({ assets: c.assets.service, guard, maxBytes, tmpDir, timeoutMs: c.config.requestTimeoutMs }));
  await app.register(exportRoutes({ baseData: c.baseData, guard }));
  const zip = { maxUncompressedBytes: 512 * 1024 * 1024, maxRatio: 200, maxEntries: 10_000 };
  const imports = new ImportService(c.baseData, c.bases, zip, c.importJobs);
  await app.register(importRoutes({ imports, guard, maxBytes, tmpDir, timeoutMs: c.config.requestTimeoutMs }));
  const archives = new ArchiveService(c.db, c.bases, c.assets.service, (baseId) => c.baseData.snapshots.evict(baseId), { zip: { ...zip, maxUncompressedBytes: 20 * maxBytes }, tmpDir });
  await app.register(archiveRoutes({ archives, guard, maxBytes, tmpDir, timeoutMs: c.config.requestTimeoutMs }));
  return app;
}
