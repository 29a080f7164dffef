/**
 * The formula's date parts in SQL — year, month, day, hour, minute, second, weekday — over date
 * columns, giving the formula library's answer on both engines.
 *
 * A stored date cell is `YYYY-MM-DD` or `YYYY-MM-DD HH:mm`, the wall clock in TIME_ZONE (the
 * original's naive strings; see src/shared/dates), so its parts are read from the text itself: no
 * zone conversion happens in SQL, and both engines read the same characters the formula reads.
 */
import { sql } from 'kysely';
import type { Fragment } from './field-sql.js';

export const DATE_PARTS = ['year', 'month', 'day', 'hour', 'minute', 'second', 'weekday'] as const;
export type DatePart = (typeof DATE_PARTS)[number];

/** The wall-clock text `YYYY-MM-DD HH:mm` of a date cell's stored text `raw`, or NULL when the text is neither stored form. */
function localText(raw: Fragment, dialect: 'sqlite' | 'postgres'): Fragment {
  if (dialect === 'postgres') {
    return sql`(case when ${raw} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' then ${raw} || ' 00:00' when ${raw} ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}$' then ${raw} end)`;
  }
  const day = '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]';
  return sql`(case when ${raw} glob ${sql.lit(day)} then ${raw} || ' 00:00' when ${raw} glob ${sql.lit(`${day} [0-9][0-9]:[0-9][0-9]`)} then ${raw} end)`;
}

/** The part of the date whose stored text is `raw`, as a number (NULL for an empty cell). */
export function datePart(part: DatePart, raw: Fragment, dialect: 'sqlite' | 'postgres'): Fragment {
  const local = localText(raw, dialect);
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
