/**
 * The zone dates are written and shown in (TIME_ZONE, process-wide like the configuration it comes
 * from) and wall-clock ⇄ instant conversion there, DST-proof, through cached `Intl.DateTimeFormat`s.
 */

let zone = 'UTC';
/** Bumped on every change of zone, so caches keyed by stored text know when to forget. */
let generation = 0;

/** Set by the container from `config.timeZone` (an IANA name already checked by the config loader). */
export function configureTimeZone(timeZone: string): void {
  if (timeZone === zone) return;
  zone = timeZone;
  generation++;
}

export function timeZone(): string {
  return zone;
}

export function zoneGeneration(): number {
  return generation;
}

export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** Date.UTC without its trap of reading years 0–99 as 1900–1999. */
export function utcMs(y: number, monthIndex: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(y, monthIndex, d);
  date.setUTCHours(h, mi, s, ms);
  return date.getTime();
}

/** The wall clock in `tz` at the instant `ms`. */
export function wallClockAt(ms: number, tz = zone): WallClock {
  if (tz === 'UTC') {
    const t = new Date(ms);
    return { year: t.getUTCFullYear(), month: t.getUTCMonth() + 1, day: t.getUTCDate(), hour: t.getUTCHours(), minute: t.getUTCMinutes(), second: t.getUTCSeconds() };
  }
  const out: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(new Date(ms))) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return { year: out.year!, month: out.month!, day: out.day!, hour: out.hour!, minute: out.minute!, second: out.second! };
}

/** Minutes `tz` is ahead of UTC at the instant `ms`. */
export function offsetMinutesAt(ms: number, tz = zone): number {
  if (tz === 'UTC') return 0;
  const p = wallClockAt(ms, tz);
  const wall = utcMs(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
}

/**
 * The instant the wall clock in `tz` shows the given time. A time shown twice (the hour repeated when
 * DST ends) is its first occurrence; a time skipped by a DST jump is read with the offset before the
 * jump, so 02:30 on a spring-forward night is 03:30 summer time.
 */
export function instantOf(w: WallClock, tz = zone, millis = 0): number {
  const wall = utcMs(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, millis);
  if (tz === 'UTC') return wall;
  // Offsets change at most once within a day around any wall time (no zone does more).
  const before = offsetMinutesAt(wall - DAY_MS, tz);
  const after = offsetMinutesAt(wall + DAY_MS, tz);
  const candidates = [wall - before * 60_000, wall - after * 60_000].filter((ms, i) => offsetMinutesAt(ms, tz) === (i === 0 ? before : after));
  return candidates.length > 0 ? Math.min(...candidates) : wall - before * 60_000;
}

const DAY_MS = 86_400_000;
