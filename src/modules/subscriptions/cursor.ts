/**
 * A change-feed position: the last row event and the last structure event passed, `"<event>-<structure>"`.
 * Row events and structure events are each numbered in commit order; a structure change sits after
 * the row event it names (`after_event_id`), so the pair says exactly what was seen.
 */
export interface Cursor {
  event: number;
  structure: number;
}

export function formatCursor(cursor: Cursor): string {
  return `${cursor.event}-${cursor.structure}`;
}

/** `"12-3"`, or `"12"` (no structure event seen); null when malformed. */
export function parseCursor(text: string): Cursor | null {
  const match = /^(\d{1,15})(?:-(\d{1,15}))?$/.exec(text);
  if (!match) return null;
  return { event: Number(match[1]), structure: Number(match[2] ?? 0) };
}
