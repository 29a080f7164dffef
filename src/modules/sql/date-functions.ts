/**
 * The formula's date parts in SQL — year, month, day, hour, minute, second, weekday — over date
 * columns, giving the formula library's answer in TIME_ZONE on both engines.
 *
 * A stored date cell is `YYYY-MM-DD` (a day in TIME_ZONE) or `YYYY-MM-DD HH:mm` (a UTC instant).
 * SQLite has no zone database, so the zone's UTC offsets are handed to the query: the offset changes
 * of TIME_ZONE between 1900 and 2100 (computed once per zone with Intl) become a CASE over the UTC
 * text, and the instant is shifted by its offset before its parts are read. Both engines read the
 * same CASE, so both give the same wall-clock parts as the formula's `partsIn(ms, TIME_ZONE)`.
 */
import { sql } from 'kysely';
import { offsetMinutes } from '../formulas/calendar.js';
import type { Fragment } from './field-sql.js';

export const DATE_PARTS = ['year', 'month', 'day', 'hour', 'minute', 'second', 'weekday'] as const;
export type DatePart = (typeof DATE_PARTS)[number];

const FIRST = Date.UTC(1900, 0, 1);
const LAST = Date.UTC(2100, 0, 1);
const STEP = 7 * 86_400_000;

interface Transition {
  /** UTC text `YYYY-MM-DD HH:mm` from which `offset` holds. */
  from: string;
  offset: number;
}

const transitionsByZone = new Map<string, { initial: number; changes: Transition[] }>();

const utcText = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

/** The offset changes of `timeZone` (minute precision) between 1900 and 2100. */
function transitions(timeZone: string): { initial: number; changes: Transition[] } {
  let found = transitionsByZone.get(timeZone);
  if (found) return found;
  const changes: Transition[] = [];
  const initial = offsetMinutes(FIRST, timeZone);
  let before = initial;
  for (let t = FIRST + STEP; t <= LAST; t += STEP) {
    const now = offsetMinutes(t, timeZone);
    if (now === before) continue;
    // The change lies in (t - STEP, t]: narrow it to the minute.
    let lo = t - STEP;
    let hi = t;
    while (hi - lo > 60_000) {
      const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
      if (offsetMinutes(mid, timeZone) === before) lo = mid;
      else hi = mid;
    }
    changes.push({ from: utcText(hi), offset: now });
    before = now;
  }
  found = { initial, changes };
  transitionsByZone.set(timeZone, found);
  return found;
}

/** The UTC offset (minutes) of TIME_ZONE at the UTC text `utc`, as SQL: newest change first. */
function offsetAt(utc: Fragment, timeZone: string): Fragment {
  const { initial, changes } = transitions(timeZone);
  if (changes.length === 0) return sql.lit(initial);
  const whens = [...changes].reverse().map((c) => sql`when ${utc} >= ${sql.lit(c.from)} then ${sql.lit(c.offset)}`);
  return sql`(case ${sql.join(whens, sql` `)} else ${sql.lit(initial)} end)`;
}

/**
 * The wall-clock text `YYYY-MM-DD HH:mm` in TIME_ZONE of a date cell's stored text `raw`, or NULL
 * when the text is neither stored form.
 */
function localText(raw: Fragment, dialect: 'sqlite' | 'postgres', timeZone: string): Fragment {
  if (dialect === 'postgres') {
    const shifted = sql`to_char(cast(${raw} as timestamp) + make_interval(mins => ${offsetAt(raw, timeZone)}), 'YYYY-MM-DD HH24:MI')`;
    return sql`(case when ${raw} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' then ${raw} || ' 00:00' when ${raw} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}$' then ${shifted} end)`;
  }
  const day = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]";
  const shifted = sql`strftime('%Y-%m-%d %H:%M', ${raw}, ${offsetAt(raw, timeZone)} || ' minutes')`;
  return sql`(case when ${raw} glob ${sql.lit(day)} then ${raw} || ' 00:00' when ${raw} glob ${sql.lit(`${day} [0-9][0-9]:[0-9][0-9]`)} then ${shifted} end)`;
}

/** The part of the date whose stored text is `raw`, as a number (NULL for an empty cell). */
export function datePart(part: DatePart, raw: Fragment, dialect: 'sqlite' | 'postgres', timeZone: string): Fragment {
  const local = localText(raw, dialect, timeZone);
  const int = (from: number, length: number) => sql`cast(substr(${local}, ${sql.lit(from)}, ${sql.lit(length)}) as integer)`;
  switch (part) {
    case 'year':
      return int(1, 4);
    case 'month':
      return int(6, 2);
    case 'day':
      return int(9, 2);
    case 'hour':
      return int(12, 2);
    case 'minute':
      return int(15, 2);
    case 'second':
      // Stored dates carry minutes only.
      return sql`(case when ${local} is null then null else 0 end)`;
    case 'weekday': {
      // The formula's weekday(date): 1 = Sunday … 7 = Saturday.
      const dow = dialect === 'postgres' ? sql`cast(extract(dow from cast(substr(${local}, 1, 10) as date)) as integer)` : sql`cast(strftime('%w', substr(${local}, 1, 10)) as integer)`;
      return sql`(${dow} + 1)`;
    }
  }
}
