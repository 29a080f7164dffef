import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { Server, type ServerOptions } from 'socket.io';
import { createAdapter } from '@socket.io/redis-streams-adapter';
import type { DialectName, Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { BaseTokenVerifier } from '../tokens/index.js';
import { loadIoredis } from '../../platform/redis.js';
import { LiveSockets, type LiveOperations } from './live-sockets.js';
import { NotificationWatcher } from './notification-watcher.js';
import { Poller } from './poller.js';
import { Presence } from './presence.js';
import { RealtimeConsumer } from './realtime.consumer.js';
import { uiToastsRoutes } from './ui-toasts.routes.js';

export const SOCKET_IO_PATH = '/api-gateway/socket.io';

export interface RealtimeDeps {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  verifier: BaseTokenVerifier;
  /** Applies row operations live clients send (the rows module's); without it they are refused. */
  applyOperation?: LiveOperations['apply'];
  config: {
    redisUrl: string | null;
    trustProxy: boolean;
    realtimeMaxConnectionsPerUser: number;
    realtimeMaxConnectionsPerIp: number;
    realtimeRecoverySeconds: number;
    realtimeMaxBufferedPackets: number;
  };
  /** Tests shorten these; defaults: credentials re-checked every 2 s, notifications looked for every 250 ms. */
  sweepIntervalMs?: number;
  notificationPollMs?: number;
  /** How often structure changes of other instances are looked for; default 1 s. */
  structurePollMs?: number;
}

type Log = { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };

export interface Realtime {
  /** The socket.io server (not listening until `attach`); emits reach every instance through Redis. */
  io: Server;
  /** The outbox consumer behind `update-dtable` (register it with the dispatcher). */
  consumer: RealtimeConsumer;
  /** Fastify plugin: socket.io on the app's HTTP server at SOCKET_IO_PATH, and POST …/ui-toasts/. */
  attach(app: FastifyInstance): Promise<void>;
  /** A structure change committed here: send it soon (other instances' are found by polling). */
  wakeStructure(): void;
  /**
   * A write to the base committed here: when sockets on this instance watch the base, send its changes
   * now, ahead of the dispatcher's other consumers (otherwise the dispatcher sends them on its turn).
   */
  wakeConsumer(baseId: number): void;
  /** One sweep of this instance's sockets now (the timer runs one every `sweepIntervalMs`), presence refresh included. */
  sweep(): Promise<void>;
  /** Resolves once messages from other instances can arrive (at once without Redis). */
  ready(): Promise<void>;
  useLogger(log: Log): void;
  close(): Promise<void>;
}

const MAX_MESSAGE_BYTES = 64 * 1024;
/** How long a base stays present after this instance last recorded its sockets there (at least). */
const PRESENCE_TTL_MS = 60_000;

export function createRealtime(deps: RealtimeDeps): Realtime {
  const { config } = deps;
  let log: Log | undefined;
  const redis = config.redisUrl ? new (loadIoredis().Redis)(config.redisUrl, { connectionName: 'basegate:realtime', maxRetriesPerRequest: 3 }) : null;
  redis?.on('error', (error: Error) => log?.warn({ err: error }, 'realtime Redis connection failed'));
  const recoveryMs = config.realtimeRecoverySeconds * 1000;
  const options: Partial<ServerOptions> = {
    path: SOCKET_IO_PATH,
    serveClient: false,
    maxHttpBufferSize: MAX_MESSAGE_BYTES,
    // (engine.io's default, said outright: compressing each frame per socket would cost more than it saves.
    // A broadcast's websocket frame is encoded once for all the sockets of the room.)
    perMessageDeflate: false,
    // Recovered sockets skip no checks of ours: limits and credentials live in the connection handler and sweep.
    connectionStateRecovery: { maxDisconnectionDuration: recoveryMs, skipMiddlewares: true },
    cors: { origin: true, credentials: true },
  };
  if (redis) options.adapter = createAdapter(redis, { streamName: 'basegate:realtime', blockTimeInMs: 1000, maxLen: 100_000 });
  const io = new Server(options);
  const sweepIntervalMs = deps.sweepIntervalMs ?? 2000;
  // Refreshed by every sweep: missing many in a row (a stalled instance) is needed before a base is skipped.
  const presence = new Presence(deps.db, deps.clock, Math.max(PRESENCE_TTL_MS, 10 * sweepIntervalMs), recoveryMs, () => log);
  // (The consumer is made below; operations arrive only once sockets connect, after this function returned.)
  const operations: LiveOperations | undefined = deps.applyOperation && {
    apply: deps.applyOperation,
    noteOrigin: (writeId, socketId) => consumer.noteOrigin(writeId, socketId),
    forgetOrigin: (writeId) => consumer.forgetOrigin(writeId),
  };
  const sockets = new LiveSockets(
    io,
    deps.verifier,
    {
      maxPerUser: config.realtimeMaxConnectionsPerUser,
      maxPerIp: config.realtimeMaxConnectionsPerIp,
      maxBufferedPackets: config.realtimeMaxBufferedPackets,
      trustProxy: config.trustProxy,
      sweepIntervalMs,
    },
    () => log,
    presence,
    operations,
  );
  const notifications = new NotificationWatcher(deps.db, io);
  const watcher = new Poller(() => notifications.pass(), deps.notificationPollMs ?? 250, (error) =>
    log?.error({ err: error }, 'pushing notifications failed'),
  );
  const consumer = new RealtimeConsumer(deps.db, deps.dialect, io, deps.clock, Math.max(recoveryMs, 60_000), () => watcher.wake());
  const structure = new Poller(() => consumer.flushStructure(), deps.structurePollMs ?? 1000, (error) =>
    log?.error({ err: error }, 'sending structure changes failed'),
  );
  // Only woken by commits here: the dispatcher polls (other instances' commits, a failed run).
  const own = new Poller(() => consumer.catchUp(), 0, (error) => log?.error({ err: error }, 'sending changes failed'));
  let attached = false;

  return {
    io,
    consumer,
    async attach(app) {
      // (Tests may build a second app on one container: the newest server gets the engine.)
      attached = true;
      io.attach(app.server);
      sockets.start();
      watcher.start();
      structure.start();
      own.start();
      // Live connections would hold the HTTP server open: end them before it closes.
      app.addHook('preClose', (done) => {
        sockets.stop();
        io.local.disconnectSockets(true);
        done();
      });
      await app.register(uiToastsRoutes(io));
    },
    wakeStructure: () => structure.wake(),
    wakeConsumer(baseId) {
      if (presence.hasSockets(baseId)) own.wake();
    },
    sweep: () => sockets.sweep(),
    async ready() {
      if (!redis) return;
      if (redis.status === 'ready') return;
      // Bounded: without Redis this instance still serves its own sockets; messages from others resume with it.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000);
        redis.once('ready', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    useLogger(next) {
      log = next;
    },
    async close() {
      sockets.stop();
      await watcher.stop();
      await structure.stop();
      await own.stop();
      // io.close() also closes the engine it was attached to; without one only the adapter needs closing.
      if (attached) await io.close();
      else await io.of('/').adapter.close();
      await presence.close();
      redis?.disconnect();
    },
  };
}
