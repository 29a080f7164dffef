import type { FastifyInstance } from 'fastify';
import type { Redis } from '../../platform/redis.js';
import { Server, type ServerOptions } from 'socket.io';
import { createAdapter } from '@socket.io/redis-streams-adapter';
import type { DialectName, Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { BaseTokenVerifier } from '../tokens/index.js';
import { createRedis } from '../../platform/redis.js';
import { LiveSockets, type LiveOperations } from './live-sockets.js';
import { NotificationWatcher } from './notification-watcher.js';
import { Poller } from './poller.js';
import { Presence } from './presence.js';
import { RealtimeConsumer } from './realtime.consumer.js';
import { OutboxResume } from './resume.js';
import { sessionAdapter, type PositionedSessionAdapter } from './session-adapter.js';
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
    realtimeMaxBufferedBytes: number;
    realtimeRecoveryBufferBytes: number;
    realtimeJoinsPerMinute: number;
    realtimeRecoveryBaseBytes: number;
    realtimeRecoveryBaseMessages: number;
    realtimeMaxOperationBytes: number;
    /** TIME_ZONE: shared views' relative date filters read dates there (default UTC). */
    timeZone?: string;
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

const REDIS_AWAY = "realtime Redis unreachable; live changes reach this instance's clients only until it is back";

/**
 * The adapter's Redis client. Its own commands (XADD of a broadcast, the session SET) fail at once
 * while Redis is away, so a broadcast still reaches this instance's sockets at once (the adapter
 * catches the failed publish); the clients it duplicates for its blocking stream reader and its
 * subscriber wait for Redis instead (no failing loop, no unhandled rejection) and read on when it
 * is back. Nothing here ends the process or delays start: the live channel serves this instance alone
 * meanwhile (warned in the log, `basegate_redis_connected{client="realtime"}` is 0).
 */
function adapterClient(url: string, log: () => Log | undefined): Redis {
  const onError = (error: Error, suppressed: number) => log()?.warn({ err: error, suppressed }, REDIS_AWAY);
  const client = createRedis(url, { name: 'realtime', onError });
  client.duplicate = () => createRedis(url, { name: 'realtime-reader', waitWhileAway: true });
  // The adapter sends these without awaiting them (a session kept on disconnect, ephemeral messages):
  // while Redis is away their rejection would otherwise be unhandled and end the process.
  const { set, publish } = client;
  client.set = ((...args: unknown[]) => (set as (...a: unknown[]) => Promise<unknown>).apply(client, args).catch(() => null)) as typeof set;
  client.publish = ((...args: unknown[]) => (publish as (...a: unknown[]) => Promise<unknown>).apply(client, args).catch(() => 0)) as typeof publish;
  return client;
}

export function createRealtime(deps: RealtimeDeps): Realtime {
  const { config } = deps;
  let log: Log | undefined;
  const redis = config.redisUrl ? adapterClient(config.redisUrl, () => log) : null;
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
  else {
    options.adapter = sessionAdapter({
      windowMs: recoveryMs,
      maxBytes: config.realtimeRecoveryBufferBytes,
      perRoomBytes: config.realtimeRecoveryBaseBytes,
      perRoomMessages: config.realtimeRecoveryBaseMessages,
    }) as unknown as ServerOptions['adapter'];
  }
  const io = new Server(options);
  // Without Redis: offsets name outbox positions, so a client is resumed from the outbox by any instance.
  const positioned = redis ? null : (io.of('/').adapter as unknown as PositionedSessionAdapter);
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
      maxBufferedBytes: config.realtimeMaxBufferedBytes,
      joinsPerMinute: config.realtimeJoinsPerMinute,
      // Written well within the session's lifetime (the recovery window).
      sessionRefreshMs: redis ? recoveryMs / 3 : 0,
      trustProxy: config.trustProxy,
      sweepIntervalMs,
    },
    () => log,
    presence,
    operations,
    positioned
      ? new OutboxResume(positioned, (...args) => consumer.missed(...args), (socket, message) => consumer.emitTo(socket, message), recoveryMs)
      : undefined,
  );
  const notifications = new NotificationWatcher(deps.db, io);
  const watcher = new Poller(() => notifications.pass(), deps.notificationPollMs ?? 250, (error) =>
    log?.error({ err: error }, 'pushing notifications failed'),
  );
  const consumer = new RealtimeConsumer(deps.db, deps.dialect, io, deps.clock, Math.max(recoveryMs, 60_000), () => watcher.wake(), {
    maxOperationBytes: config.realtimeMaxOperationBytes,
    timeZone: config.timeZone,
    at: positioned ? (position, emit) => positioned.at(position, emit) : (_position, emit) => emit(),
  });
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
      // Its first look only notes the newest notification (no socket yet): taken now, before the server
      // listens, or a notification committed before the first 250 ms tick would be skipped for sockets
      // that joined meanwhile.
      watcher.wake();
      structure.start();
      own.start();
      // Live connections would hold the HTTP server open: end them before it closes. Only their
      // transport is closed, without socket.io's disconnect packet: a client takes a server-side
      // disconnect as final, a lost transport as a reason to reconnect (to this instance once it is
      // back, or another) and resume where it left off.
      app.addHook('preClose', (done) => {
        sockets.stop();
        for (const socket of io.of('/').sockets.values()) socket.conn.close();
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
      // (Errors before the logger was given went unlogged: say it now.)
      if (redis && redis.status !== 'ready') log.warn({ status: redis.status }, REDIS_AWAY);
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
