import { Adapter, type BroadcastOptions, type Room } from 'socket.io-adapter';
import { comparePositions, formatOffset, parseOffset, type Position } from './positions.js';

/** What socket.io hands to `persistSession` / expects back from `restoreSession` (typed loosely there). */
interface StoredSession {
  sid: string;
  pid: string;
  rooms: Room[];
  data: unknown;
  disconnectedAt: number;
}

/** One broadcast kept for connection-state recovery. */
interface Kept {
  id: string;
  seq: number;
  key: string;
  opts: BroadcastOptions;
  data: unknown[];
  emittedAt: number;
  bytes: number;
  dropped: boolean;
}

/** The broadcasts kept of one room (a base's, a user's, a socket's own). */
interface RoomLog {
  entries: Kept[];
  bytes: number;
  count: number;
}

export interface SessionAdapterBounds {
  /** The reconnection window (REALTIME_RECOVERY_SECONDS): sessions and broadcasts older than it go. */
  windowMs: number;
  /** All rooms together (REALTIME_RECOVERY_BUFFER_BYTES). */
  maxBytes: number;
  /** One room, so one busy base cannot evict every other base's window (REALTIME_RECOVERY_BASE_BYTES / _MESSAGES). */
  perRoomBytes: number;
  perRoomMessages: number;
}

/** Packets held for a socket while it is resumed from the outbox (beyond this it reloads instead). */
const MAX_HELD = 1000;

function bytesOf(data: unknown[]): number {
  let bytes = 0;
  for (const arg of data) bytes += typeof arg === 'string' ? arg.length : 16;
  return bytes;
}

function includes(rooms: Set<Room>, opts: BroadcastOptions): boolean {
  const included = opts.rooms.size === 0 || [...rooms].some((room) => opts.rooms.has(room));
  return included && ![...rooms].some((room) => opts.except?.has(room));
}

/**
 * socket.io's in-memory connection-state recovery (used without Redis), with two changes:
 * - each broadcast's offset names its place in the outbox (`positions.ts`), so a client that comes back
 *   to a process that never saw it (a restart, another instance) is resumed from the `events` table;
 * - the kept broadcasts are bounded per room as well as in all (bytes, count) and by the window.
 * While a socket is being resumed, broadcasts to it are held and sent after the replay (`hold`/`release`).
 */
export function sessionAdapter(bounds: SessionAdapterBounds) {
  return class PositionedSessionAdapter extends Adapter {
    private readonly sessions = new Map<string, StoredSession>();
    private kept: Kept[] = [];
    private head = 0;
    private readonly byId = new Map<string, Kept>();
    private readonly logs = new Map<string, RoomLog>();
    private total = 0;
    private seq = 0;
    /** The highest position broadcast by this process. */
    private position: Position = { event: 0, structure: 0 };
    private next: Position | null = null;
    private readonly held = new Map<string, unknown[][] | null>();
    private readonly timer: NodeJS.Timeout;

    constructor(nsp: unknown) {
      super(nsp);
      this.timer = setInterval(() => this.expire(), Math.min(60_000, Math.max(1000, bounds.windowMs / 10)));
      this.timer.unref();
    }

    override close(): void {
      clearInterval(this.timer);
    }

    /** Runs `emit` (one broadcast or socket emit) with its offset naming `position`. */
    at(position: Position, emit: () => void): void {
      this.next = position;
      try {
        emit();
      } finally {
        this.next = null;
      }
    }

    override persistSession(session: Omit<StoredSession, 'disconnectedAt'>): void {
      this.sessions.set(session.pid, { ...session, disconnectedAt: Date.now() });
    }

    override restoreSession(pid: string, offset: string): Promise<never> {
      const found = this.restore(pid, offset);
      return Promise.resolve(found as never);
    }

    private restore(pid: string, offset: string): (StoredSession & { missedPackets: unknown[][] }) | null {
      const session = this.sessions.get(pid);
      if (!session) return null;
      if (session.disconnectedAt + bounds.windowMs < Date.now()) {
        this.sessions.delete(pid);
        return null;
      }
      const from = this.byId.get(offset);
      if (!from || from.dropped) return null; // (resumed from the outbox when the client joins again)
      const rooms = new Set(session.rooms);
      const missedPackets: unknown[][] = [];
      for (let i = this.indexAfter(from.seq); i < this.kept.length; i++) {
        const entry = this.kept[i]!;
        if (!entry.dropped && includes(rooms, entry.opts)) missedPackets.push(entry.data);
      }
      return { ...session, missedPackets };
    }

    override broadcast(packet: { type: number; id?: number; data: unknown[] }, opts: BroadcastOptions): void {
      if (packet.type === 2 && packet.id === undefined && opts.flags?.volatile === undefined) {
        const position = this.next ?? this.position;
        if (comparePositions(position, this.position) > 0) this.position = position;
        const id = formatOffset(position, ++this.seq);
        packet.data.push(id);
        this.keep(id, opts, packet.data);
        if (this.held.size > 0) opts = this.holdFrom(packet.data, opts);
      }
      super.broadcast(packet, opts);
    }

    /** Broadcasts for socket `sid` are held from now until `release`. */
    hold(sid: string): void {
      this.held.set(sid, []);
    }

    /**
     * Ends holding for `sid`: the held packets (event name first, offset last) whose position is past
     * `through`, or null when more came than are held (the socket must reload).
     */
    release(sid: string, through: Position): unknown[][] | null {
      const held = this.held.get(sid);
      this.held.delete(sid);
      if (held === undefined || held === null) return null;
      return held.filter((data) => {
        const position = parseOffset(data[data.length - 1]);
        return position === null || comparePositions(position, through) > 0;
      });
    }

    private holdFrom(data: unknown[], opts: BroadcastOptions): BroadcastOptions {
      let except: Set<Room> | null = null;
      for (const [sid, held] of this.held) {
        if (opts.rooms.has(sid)) continue; // (the replay itself)
        const socket = (this.nsp as { sockets: Map<string, { rooms: Set<Room> }> }).sockets.get(sid);
        if (!socket || !includes(socket.rooms, opts)) continue;
        if (held !== null) {
          if (held.length < MAX_HELD) held.push(data.slice());
          else this.held.set(sid, null);
        }
        except ??= new Set(opts.except);
        except.add(sid);
      }
      return except ? { ...opts, except } : opts;
    }

    private keep(id: string, opts: BroadcastOptions, data: unknown[]): void {
      const key = opts.rooms.size === 0 ? '*' : opts.rooms.values().next().value!;
      const entry: Kept = { id, seq: this.seq, key, opts, data, emittedAt: Date.now(), bytes: bytesOf(data), dropped: false };
      this.kept.push(entry);
      this.byId.set(id, entry);
      let log = this.logs.get(key);
      if (!log) this.logs.set(key, (log = { entries: [], bytes: 0, count: 0 }));
      log.entries.push(entry);
      log.bytes += entry.bytes;
      log.count++;
      this.total += entry.bytes;
      while (log.count > 0 && (log.bytes > bounds.perRoomBytes || log.count > bounds.perRoomMessages)) this.drop(log.entries.shift()!);
      while (this.total > bounds.maxBytes && this.head < this.kept.length) this.drop(this.kept[this.head++]!);
      this.compact();
    }

    private drop(entry: Kept): void {
      if (entry.dropped) return;
      entry.dropped = true;
      this.byId.delete(entry.id);
      this.total -= entry.bytes;
      const log = this.logs.get(entry.key)!;
      log.bytes -= entry.bytes;
      log.count--;
      if (log.entries[0] === entry) log.entries.shift();
      if (log.count === 0) this.logs.delete(entry.key);
    }

    private expire(): void {
      const threshold = Date.now() - bounds.windowMs;
      for (const [pid, session] of this.sessions) if (session.disconnectedAt < threshold) this.sessions.delete(pid);
      while (this.head < this.kept.length && this.kept[this.head]!.emittedAt < threshold) this.drop(this.kept[this.head++]!);
      this.compact();
    }

    /** Skips dropped entries at the front and reclaims the array's dead head now and then. */
    private compact(): void {
      while (this.head < this.kept.length && this.kept[this.head]!.dropped) this.head++;
      if (this.head > 1024 && this.head * 2 > this.kept.length) {
        this.kept = this.kept.slice(this.head);
        this.head = 0;
      }
    }

    /** Index of the first kept entry with a higher `seq` (entries are in seq order). */
    private indexAfter(seq: number): number {
      let lo = this.head;
      let hi = this.kept.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.kept[mid]!.seq <= seq) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    }
  };
}

export type PositionedSessionAdapter = InstanceType<ReturnType<typeof sessionAdapter>>;
