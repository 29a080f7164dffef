import type { Socket } from 'socket.io';
import { parseOffset, type Position } from './positions.js';
import type { Outgoing } from './realtime.consumer.js';
import type { PositionedSessionAdapter } from './session-adapter.js';

/** The changes a client missed (the consumer's `missed`), null when it must reload. */
type Missed = (baseId: number, from: Position, limit: number, windowMs: number) => Promise<Outgoing[] | null>;
type EmitTo = (target: Socket, message: Outgoing) => void;

/** Events one resume may replay; beyond it the client reloads the base (cheaper than the replay). */
const MAX_REPLAY_EVENTS = 10_000;

/**
 * Resume from the outbox: a client that reconnects without its session being found here (its process
 * died or restarted, another instance, its last broadcast dropped from memory) but with the offset of
 * the last broadcast it got sends that offset in its handshake; when it joins its base again it gets
 * every change of the base sent since, in order, then the live ones (held meanwhile, none twice).
 */
export class OutboxResume {
  constructor(
    private readonly adapter: PositionedSessionAdapter,
    private readonly missed: Missed,
    private readonly emitTo: EmitTo,
    private readonly windowMs: number,
  ) {}

  /** The position the client left off at (from its handshake), holding its broadcasts from now; null: nothing to resume. */
  begin(socket: Socket): Position | null {
    if (socket.recovered) return null;
    const from = parseOffset((socket.handshake.auth as { offset?: unknown } | undefined)?.offset);
    if (from) this.adapter.hold(socket.id);
    return from;
  }

  /** Sends what the client missed since `from` (in the base's room by now); false: it must reload the base. */
  async finish(socket: Socket, baseId: number, from: Position): Promise<boolean> {
    let replay: Outgoing[] | null = null;
    try {
      replay = await this.missed(baseId, from, MAX_REPLAY_EVENTS, this.windowMs);
    } finally {
      let through = from;
      for (const message of replay ?? []) {
        this.emitTo(socket, message);
        through = message.position;
      }
      const held = this.adapter.release(socket.id, through);
      if (held === null) replay = null;
      // (Broadcast to the room while the replay was read: sent now, after it, each with its own offset.)
      for (const data of held ?? []) socket.emit(...(data.slice(0, -1) as [string, ...unknown[]]));
    }
    return replay !== null;
  }
}
