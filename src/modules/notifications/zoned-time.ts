import { Cron } from 'croner';

/**
 * Calendar arithmetic in TIME_ZONE for deadline reminders. Pure: every function takes "now" and the zone.
 * Day keys are `YYYY-MM-DD` strings, which compare correctly as text.
 */

const dayFormatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar day of the instant `ms` in `timeZone`, as `YYYY-MM-DD`. */
export function localDay(ms: number, timeZone: string): string {
  let format = dayFormatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormatters.set(timeZone, format);
  }
  const parts = format.formatToParts(new Date(ms));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** `day` plus `days` calendar days. */
export function addDays(day: string, days: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/**
 * The first instant strictly after `after` at which the wall clock in `timeZone` shows `hour`:00.
 * On a day where that hour is skipped (DST), croner moves to the next valid instant.
 */
export function nextRunAt(after: number, hour: number, timeZone: string): number {
  const next = new Cron(`0 0 ${hour} * * *`, { timezone: timeZone }).nextRun(new Date(after));
  if (!next) throw new Error(`no next run for hour ${hour} in ${timeZone}`);
  return next.getTime();
}
