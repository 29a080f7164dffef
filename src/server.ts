import type { FastifyInstance } from 'fastify';
import type { Config, Role } from './config/index.js';
import { buildApp } from './app.js';
import { ensureAdmin } from './bootstrap.js';
import { createContainer, type Container } from './container.js';
import { migrateToLatest, waitForDatabase } from './db/index.js';
import { beginProcessStop } from './shared/shutdown.js';

export interface RunningServer {
  app: FastifyInstance;
  container: Container;
  stop(): Promise<void>;
  /** What the stop in progress waits for now (logged when the stop is forced). */
  waitingFor(): string;
}

/**
 * Wait for the database (retrying with backoff), migrate, make sure an admin exists, and listen.
 * `roles` picks what this process runs.
 */
export async function startServer(config: Config, roles: readonly Role[]): Promise<RunningServer> {
  const container = createContainer(config);
  const app = await buildApp(container);
  container.database.useLogger?.(app.log);
  await waitForDatabase(container.db, { log: app.log });
  await migrateToLatest(container.db);
  // Imports a crash interrupted are undone before anything reads the bases (ImportJobs).
  const undone = await container.importJobs.recover();
  if (undone > 0) app.log.warn({ undone }, 'undid imports interrupted by a stop of their process');
  // The row indexes and group sets reads of big tables look up, loaded before the first request.
  await container.baseData.warm().catch((err: unknown) => app.log.warn({ err }, 'row indexes and group sets not loaded: the first reads of big tables go without them'));
  await ensureAdmin(container, (line) => process.stdout.write(line + '\n'));
  await app.ready();
  container.dispatcher.useLogger(app.log);
  container.realtime.useLogger(app.log);
  await container.realtime.ready();
  if (roles.includes('worker')) container.dispatcher.start();
  container.webhooks.deliverer.useLogger(app.log);
  if (roles.includes('worker')) container.webhooks.deliverer.start();
  container.notifications.useLogger(app.log);
  container.automations.useLogger(app.log);
  container.scheduler.useLogger(app.log);
  if (roles.includes('scheduler')) container.scheduler.start();
  // Listen last: once "Server listening" is logged the caller can install its signal handlers
  // in the same turn, so a SIGTERM right after it is always a graceful stop.
  if (roles.includes('api')) await app.listen({ port: config.port, host: config.host });
  let stage = 'nothing';
  let stopping: Promise<void> | null = null;
  // Stop accepting connections first; in-flight requests get their answers while the workers
  // stop; then write-behind state is flushed and the database and Redis are closed.
  const stop = () =>
    (stopping ??= (async () => {
      stage = 'in-flight HTTP requests and the workers';
      const httpClosed = app.close();
      await Promise.all([container.scheduler.stop(), container.dispatcher.stop(), container.webhooks.deliverer.stop()]);
      stage = 'in-flight HTTP requests';
      await httpClosed;
      stage = 'flushing last_access and closing the database and Redis';
      await container.close();
      stage = 'nothing';
    })());
  return { app, container, stop, waitingFor: () => stage };
}

/**
 * Stop gracefully on SIGINT/SIGTERM and exit 0; in-flight webhook attempts are aborted (they are
 * retried). A stop that outlasts SHUTDOWN_TIMEOUT_MS (longer than any bounded database wait) is
 * forced with exit code 1, logging what it was still waiting for.
 */
export function stopOnSignals(server: RunningServer): void {
  const handler = (signal: NodeJS.Signals) => {
    server.app.log.info({ signal }, 'shutting down');
    beginProcessStop();
    const deadline = server.container.config.shutdownTimeoutMs;
    const force = setTimeout(() => {
      server.app.server.getConnections((_error, openConnections) => {
        server.app.log.error({ waitingFor: server.waitingFor(), openConnections, deadlineMs: deadline }, 'shutdown forced');
        process.exit(1);
      });
    }, deadline);
    force.unref();
    server.stop().then(
      () => {
        server.app.log.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        server.app.log.error({ err: error, waitingFor: server.waitingFor() }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}
