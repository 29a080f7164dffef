/**
 * A place in the live channel's stream, in commit order: row changes by their last event id
 * (`structure` 0), a structure change by the event id committed before it and its own id. A broadcast's
 * socket.io offset names the position of the last change sent before or with it, so the offset a client
 * sends back on reconnecting says, to any instance, where in the outbox it left off.
 */
export interface Position {
  event: number;
  structure: number;
}

export function comparePositions(a: Position, b: Position): number {
  return a.event - b.event || a.structure - b.structure;
}

/** `v<event>.<structure>.<sequence>`: unique per process, read back by any. */
export function formatOffset(position: Position, seq: number): string {
  return `v${position.event}.${position.structure}.${seq}`;
}

const OFFSET = /^v(\d{1,15})\.(\d{1,15})\.\d{1,15}$/;

/** The position an offset names; null for another format (the Redis adapter's stream ids) or garbage. */
export function parseOffset(offset: unknown): Position | null {
  if (typeof offset !== 'string') return null;
  const match = OFFSET.exec(offset);
  return match ? { event: Number(match[1]), structure: Number(match[2]) } : null;
}
