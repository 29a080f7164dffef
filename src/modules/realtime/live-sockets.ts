import { randomUUID } from 'node:crypto';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Server, Socket } from 'socket.io';
import { scopeRefusal } from '../access/index.js';
import { AppError } from '../../shared/errors.js';
import { normalizeUuid } from '../../shared/ids.js';
import type { BaseTokenVerifier, GatewayCheck } from '../tokens/index.js';
import type { GatewayAccess } from '../access/index.js';
import { ConnectionCounter } from './connection-counter.js';
import type { Presence } from './presence.js';
import type { OutboxResume } from './resume.js';
import { baseRoom, userRoom, viewRoom } from './rooms.js';
import { parseOffset } from './positions.js';

export interface LiveSocketsOptions {
  maxPerUser: number;
  maxPerIp: number;
  maxBufferedPackets: number;
  /** Bytes waiting for a client above which it is dropped at once (checked as each message is queued). */
  maxBufferedBytes: number;
  /** `join-room` calls per socket and minute. */
  joinsPerMinute: number;
  /**
   * With a shared adapter (Redis): how often a joined socket's recovery session is written to it while
   * connected (0 = never). socket.io writes it only on disconnect, which a killed process never does.
   */
  sessionRefreshMs: number;
  trustProxy: boolean;
  /** How often every socket's credential is checked again and its send buffer measured. */
  sweepIntervalMs: number;
}

/** What a joined socket keeps (restored with the socket on connection-state recovery). */
interface JoinedData {
  token: string;
  baseUuid: string;
  /** (Absent in the data of sockets recovered from before it was kept.) */
  baseId?: number;
  userKey: string;
}

type Log = { warn(obj: object, msg: string): void };

/** Row operations live clients send (`update-dtable`): applied by the rows module, their echo kept from the sender. */
export interface LiveOperations {
  /** Applies `op` for a verified read-write Base-Token; the write's events get `writeId`. Throws an AppError for a refused one. */
  apply(access: GatewayAccess, op: unknown, writeId: string): Promise<void>;
  noteOrigin(writeId: string, socketId: string): void;
  forgetOrigin(writeId: string): void;
}

type OperationAnswer = { status: true } | { status: false; message: string };

const MAX_TOKEN_LENGTH = 8192;
/** `join` succeeded but the client missed more than can be sent: it must reload the base. */
const RELOAD = '\u0000reload';

type EnginePacket = { data?: unknown };

/** engine.io's queue of packets for the client while its transport is still busy with earlier ones (typed private). */
function writeBuffer(socket: Socket): EnginePacket[] {
  return (socket.conn as unknown as { writeBuffer: EnginePacket[] }).writeBuffer;
}

function packetBytes(packet: EnginePacket): number {
  const data = packet.data;
  if (typeof data === 'string') return data.length; // (UTF-16 units: bytes for the ASCII-escaped JSON sent here)
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return data.byteLength;
  return 0;
}

/** Bytes queued for the client in engine.io's buffer. */
function bufferedBytes(buffer: EnginePacket[]): number {
  let bytes = 0;
  for (const packet of buffer) bytes += packetBytes(packet);
  return bytes;
}

/** Why a Base-Token was refused, in the gateway's words. */
function refusal(result: Extract<GatewayCheck, { ok: false }>): string {
  if (result.reason === 'expired') return 'Token expired.';
  if (result.reason === 'base-gone') return 'dtable not found.';
  return 'Permission denied.';
}

/**
 * The socket side of the live channel: `join-room (dtable_uuid, base_token, ack)` verified as on the
 * gateway, per-address and per-credential caps, and a sweep that drops sockets whose credential was
 * revoked or expired, or that stopped reading (more than `maxBufferedPackets` waiting).
 */
export class LiveSockets {
  private readonly perIp: ConnectionCounter;
  private readonly perUser: ConnectionCounter;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping = false;
  private readonly joins: RateLimiterMemory;
  private readonly sessionWritten = new WeakMap<Socket, number>();

  constructor(
    private readonly io: Server,
    private readonly verifier: BaseTokenVerifier,
    private readonly options: LiveSocketsOptions,
    private readonly log: () => Log | undefined,
    private readonly presence: Presence,
    private readonly operations?: LiveOperations,
    private readonly resume?: OutboxResume,
  ) {
    this.perIp = new ConnectionCounter(options.maxPerIp);
    this.perUser = new ConnectionCounter(options.maxPerUser);
    this.joins = new RateLimiterMemory({ points: options.joinsPerMinute, duration: 60, keyPrefix: 'realtime-join' });
    io.on('connection', (socket) => this.onConnection(socket));
  }

  start(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => void this.sweep(), this.options.sweepIntervalMs);
    this.sweepTimer.unref();
  }

  stop(): void {
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }

  private onConnection(socket: Socket): void {
    const ip = this.clientIp(socket);
    if (!this.perIp.add(ip, socket.id)) {
      this.refuse(socket, 'Too many connections.');
      return;
    }
    socket.on('disconnect', () => {
      void this.joins.delete(socket.id);
      this.perIp.remove(ip, socket.id);
      const data = socket.data as Partial<JoinedData>;
      if (data.userKey) this.perUser.remove(data.userKey, socket.id);
      if (data.baseId !== undefined) this.presence.left(data.baseId);
    });
    // A recovered socket is back in its rooms with its data: count it under its credential again.
    const restored = socket.data as Partial<JoinedData>;
    if (socket.recovered && restored.userKey && !this.perUser.add(restored.userKey, socket.id)) {
      this.refuse(socket, 'Too many connections.');
      return;
    }
    // (Restoring took the stored session away: store it again for the next reconnect.)
    if (socket.recovered && restored.token) this.storeSession(socket, true);
    if (socket.recovered && restored.baseId !== undefined) {
      const baseId = restored.baseId;
      this.presence.joined(baseId).catch((error: unknown) => {
        this.log()?.warn({ err: error, baseId }, 'recording realtime presence failed');
        // Not counted after all: the disconnect must not uncount it.
        if (socket.data === restored) socket.data = { ...restored, baseId: undefined };
      });
    }
    // A client that stops reading is dropped as soon as its queue passes the bound, not at the next sweep:
    // large broadcasts would otherwise pile up in memory for seconds.
    socket.conn.on('packetCreate', (packet: EnginePacket) => {
      const buffer = writeBuffer(socket);
      if (buffer.length === 0) return;
      const bytes = bufferedBytes(buffer) + packetBytes(packet);
      if (bytes > this.options.maxBufferedBytes) this.drop(socket, { bufferedBytes: bytes });
    });
    socket.on('update-dtable', (uuid: unknown, op: unknown, ack: unknown) => {
      const reply = typeof ack === 'function' ? (ack as (answer: object) => void) : () => undefined;
      this.operate(socket, uuid, op).then(reply, (error: unknown) => {
        this.log()?.warn({ err: error }, 'applying a live operation failed');
        reply({ status: false, message: 'Internal Server Error' });
      });
    });
    socket.on('join-room', (uuid: unknown, token: unknown, ack: unknown) => {
      const reply = typeof ack === 'function' ? (ack as (answer: object) => void) : () => undefined;
      this.joinLimited(socket, uuid, token).then(
        (error) => {
          if (error === null) return reply({ status: true });
          // Told to reload: dtable-store reloads the base on a reconnect whose answer has a higher dtable_version than its own.
          if (error === RELOAD) return reply({ status: true, reload: true, dtable_version: Number.MAX_SAFE_INTEGER });
          reply({ status: false, error_msg: error });
          this.refuse(socket, error);
        },
        () => {
          reply({ status: false, error_msg: 'Internal Server Error' });
          socket.disconnect(true);
        },
      );
    });
  }

  /** `join` within the socket's budget of joins per minute; over it the socket is refused. */
  private async joinLimited(socket: Socket, uuid: unknown, token: unknown): Promise<string | null> {
    const allowed = await this.joins.consume(socket.id).then(
      () => true,
      () => false,
    );
    if (!allowed) return 'Too many requests.';
    return this.join(socket, uuid, token);
  }

  /**
   * Ends a client that stopped reading at once, discarding what is queued for it (a plain disconnect
   * would wait for the queue to drain, which it never does), and frees its place in the join budget.
   */
  private drop(socket: Socket, detail: object): void {
    if (!socket.connected) return;
    this.log()?.warn({ socket: socket.id, ...detail }, 'dropping a live client that stopped reading');
    socket.conn.close(true);
    const ws = (socket.conn.transport as unknown as { socket?: { terminate?: () => void } }).socket;
    ws?.terminate?.();
  }

  /** Joins the base's room (and the user's); returns the refusal message, or null. */
  private async join(socket: Socket, uuidArg: unknown, tokenArg: unknown): Promise<string | null> {
    if (typeof uuidArg !== 'string' || typeof tokenArg !== 'string' || tokenArg.length > MAX_TOKEN_LENGTH) return 'Permission denied.';
    const uuid = normalizeUuid(uuidArg);
    const queried = socket.handshake.query.dtable_uuid;
    if (uuid === null || (typeof queried === 'string' && queried !== '' && normalizeUuid(queried) !== uuid)) return 'Permission denied.';
    const result = await this.verifier.check(tokenArg, uuid);
    if (!result.ok) return refusal(result);
    // A scoped token: the base's room carries every table's changes, so it needs row reading on all tables;
    // a view share's token joins a room of its own instead, which gets the view's changes only.
    const shared = result.claims.scope?.view;
    const ip = this.clientIp(socket);
    const outOfScope = shared
      ? scopeRefusal(result.claims.scope, { operations: ['read_rows'], ip, viewOpen: true })
      : scopeRefusal(result.claims.scope, { operations: ['read_rows'], allTables: true, ip });
    if (outOfScope) return outOfScope;
    // Recorded before anything else changes, so a failed write leaves the socket as it was.
    const baseId = result.base.id;
    await this.presence.joined(baseId);
    if (!socket.connected) {
      this.presence.left(baseId, false);
      return null;
    }
    const { claims } = result;
    const userKey = `${claims.source}:${claims.sourceId}`;
    const previous = socket.data as Partial<JoinedData>;
    if (previous.userKey !== userKey) {
      if (!this.perUser.add(userKey, socket.id)) {
        this.presence.left(baseId, false);
        return 'Too many connections.';
      }
      if (previous.userKey) this.perUser.remove(previous.userKey, socket.id);
    }
    const data: JoinedData = { token: tokenArg, baseUuid: uuid, baseId, userKey };
    socket.data = data;
    if (previous.baseId !== undefined) this.presence.left(previous.baseId);
    // A first join after a reconnect that was not recovered: resume from the outbox where the client left off
    // (a view's holder reloads instead: the outbox replay is the whole base's).
    const firstJoin = previous.baseUuid === undefined;
    const from = firstJoin && !shared ? (this.resume?.begin(socket) ?? null) : null;
    const reload = firstJoin && shared !== undefined && !socket.recovered && parseOffset((socket.handshake.auth as { offset?: unknown } | undefined)?.offset) !== null;
    for (const room of socket.rooms) if (room !== socket.id) await socket.leave(room);
    await socket.join(shared ? viewRoom(uuid, shared.view, claims.sourceId) : baseRoom(uuid));
    if (claims.source === 'account') await socket.join(userRoom(claims.sourceId));
    this.storeSession(socket, true);
    if (from && !(await this.resume!.finish(socket, baseId, from))) return RELOAD;
    return reload ? RELOAD : null;
  }

  /**
   * One operation of a joined socket, with the credential it joined with checked again (revoked or expired
   * tokens stop here) and `rw` required. The answer is what dtable-store's sender reads (`status`, `message`).
   */
  private async operate(socket: Socket, uuidArg: unknown, opArg: unknown): Promise<OperationAnswer> {
    const data = socket.data as Partial<JoinedData>;
    if (!this.operations) return { status: false, message: 'Operations are not accepted on this connection.' };
    if (typeof uuidArg !== 'string' || !data.token || !data.baseUuid || normalizeUuid(uuidArg) !== data.baseUuid) return { status: false, message: 'Permission denied.' };
    const result = await this.verifier.check(data.token, data.baseUuid);
    if (!result.ok) return { status: false, message: refusal(result) };
    if (result.claims.permission !== 'rw') return { status: false, message: "You don't have permission to perform this operation on this base." };
    // A view share's token writes through the rows API, which keeps its writes within the view.
    if (result.claims.scope?.view) return { status: false, message: 'The token is limited to one view: its changes go through the rows API.' };
    let op = opArg;
    if (typeof op === 'string') {
      try {
        op = JSON.parse(op);
      } catch {
        return { status: false, message: 'operation invalid.' };
      }
    }
    // A scoped token: row operations need `write_rows`, anything else changes the structure.
    const opType = typeof op === 'object' && op !== null ? String((op as { op_type?: unknown }).op_type ?? '') : '';
    const outOfScope = scopeRefusal(result.claims.scope, { operations: [/_rows?$/.test(opType) ? 'write_rows' : 'structure'], ip: this.clientIp(socket) });
    if (outOfScope) return { status: false, message: outOfScope };
    const writeId = randomUUID();
    this.operations.noteOrigin(writeId, socket.id);
    try {
      await this.operations.apply(result, op, writeId);
      return { status: true };
    } catch (error) {
      this.operations.forgetOrigin(writeId);
      if (error instanceof AppError) return { status: false, message: error.message };
      throw error;
    }
  }

  /**
   * Writes the joined socket's recovery session (rooms and data) to the shared adapter now and then
   * while it is connected, so that when this process dies without a goodbye (kill -9) the client
   * still resumes on another instance: the adapter's session lives `REALTIME_RECOVERY_SECONDS`.
   */
  private storeSession(socket: Socket, now: boolean): void {
    if (this.options.sessionRefreshMs <= 0 || !socket.connected) return;
    const at = Date.now();
    if (!now && at - (this.sessionWritten.get(socket) ?? 0) < this.options.sessionRefreshMs) return;
    const pid = (socket as unknown as { pid?: string }).pid;
    if (!pid) return;
    this.sessionWritten.set(socket, at);
    this.io.of('/').adapter.persistSession({ sid: socket.id, pid, rooms: [...socket.rooms], data: socket.data });
  }

  /** The error event, then the disconnect (sent after it, on the same transport). */
  private refuse(socket: Socket, message: string): void {
    socket.emit('error', { error_msg: message });
    socket.disconnect(true);
  }

  private clientIp(socket: Socket): string {
    if (this.options.trustProxy) {
      const forwarded = socket.handshake.headers['x-forwarded-for'];
      const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
      if (first) return first;
    }
    return socket.handshake.address;
  }

  /** One pass over this instance's sockets; a pass still running is not overlapped. */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await this.presence.refresh().catch((error: unknown) => this.log()?.warn({ err: error }, 'refreshing realtime presence failed'));
      const checks = new Map<string, Promise<GatewayCheck>>();
      for (const socket of this.io.of('/').sockets.values()) {
        const buffered = writeBuffer(socket).length;
        if (buffered > this.options.maxBufferedPackets) {
          this.drop(socket, { buffered });
          continue;
        }
        const data = socket.data as Partial<JoinedData>;
        if (!data.token || !data.baseUuid) continue;
        this.storeSession(socket, false);
        const key = `${data.baseUuid} ${data.token}`;
        let check = checks.get(key);
        if (!check) checks.set(key, (check = this.verifier.check(data.token, data.baseUuid)));
        const result = await check.catch(() => null);
        if (result && !result.ok && socket.connected) this.refuse(socket, refusal(result));
      }
    } finally {
      this.sweeping = false;
    }
  }
}
