import type { FastifyInstance } from 'fastify';
import type { Config, Role } from './config/index.js';
import { buildApp } from './app.js';
import { ensureAdmin } from './bootstrap.js';
import { createContainer, type Container } from './container.js';
import { migrateToLatest } from './db/index.js';

export interface RunningServer {
  app: FastifyInstance;
  container: Container;
  stop(): Promise<void>;
}

/** Migrate, make sure an admin exists, and listen. `roles` picks what this process runs. */
export async function startServer(config: Config, roles: readonly Role[]): Promise<RunningServer> {
  const container = createContainer(config);
  await migrateToLatest(container.db);
  await ensureAdmin(container, (line) => process.stdout.write(line + '\n'));
  const app = await buildApp(container);
  if (roles.includes('api')) {
    await app.listen({ port: config.port, host: config.host });
  } else {
    await app.ready();
  }
  container.dispatcher.useLogger(app.log);
  container.realtime.useLogger(app.log);
  await container.realtime.ready();
  if (roles.includes('worker')) container.dispatcher.start();
  container.webhooks.deliverer.useLogger(app.log);
  if (roles.includes('worker')) container.webhooks.deliverer.start();
  container.notifications.useLogger(app.log);
  container.scheduler.useLogger(app.log);
  if (roles.includes('scheduler')) container.scheduler.start();
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await container.scheduler.stop();
      await container.dispatcher.stop();
      await container.webhooks.deliverer.stop();
      await app.close();
      await container.close();
    })());
  return { app, container, stop };
}

/** Stop gracefully on SIGINT/SIGTERM: finish in-flight requests, close the database, exit. */
export function stopOnSignals(server: RunningServer): void {
  const handler = (signal: NodeJS.Signals) => {
    server.app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}
