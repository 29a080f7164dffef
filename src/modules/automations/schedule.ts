import { Cron } from 'croner';
import type { AutomationRunCondition, AutomationTrigger } from './model.js';

/**
 * When a periodic rule runs next, strictly after `after`, on the wall clock of `timeZone`. Croner
 * keeps the original's rule that day 31 runs only in months that have one. Weekday 1 is Monday, 7 Sunday.
 */
export function nextPeriodicRun(after: number, run: AutomationRunCondition, t: AutomationTrigger, timeZone: string): number | null {
  let pattern: string;
  if (run === 'per_day') pattern = `0 0 ${t.notify_hour ?? 12} * * *`;
  else if (run === 'per_week') pattern = `0 0 ${t.notify_week_hour ?? 12} * * ${(t.notify_week_day ?? 1) % 7}`;
  else if (run === 'per_month') pattern = `0 0 ${t.notify_month_hour ?? 12} ${t.notify_month_day ?? 1} * *`;
  else return null;
  const next = new Cron(pattern, { timezone: timeZone }).nextRun(new Date(after));
  return next ? next.getTime() : null;
}
