import { describe, expect, it } from 'vitest';
import { automationSource, automationApp } from './model.js';
import { nextPeriodicRun } from './schedule.js';

const trigger = (extra: Record<string, unknown>) => ({ rule_name: 'r', table_id: '0000', view_id: '0000', condition: 'run_periodically' as const, ...extra });

describe('periodic automation schedule', () => {
  const mondayNoonUtc = Date.parse('2026-01-05T12:00:00Z'); // a Monday

  it('per_day: the next notify_hour on the wall clock of TIME_ZONE', () => {
    expect(new Date(nextPeriodicRun(mondayNoonUtc, 'per_day', trigger({ notify_hour: 9 }), 'Europe/Berlin')!).toISOString()).toBe('2026-01-06T08:00:00.000Z');
    expect(new Date(nextPeriodicRun(mondayNoonUtc, 'per_day', trigger({ notify_hour: 14 }), 'UTC')!).toISOString()).toBe('2026-01-05T14:00:00.000Z');
  });

  it('per_week: weekday 1 is Monday and 7 is Sunday', () => {
    expect(new Date(nextPeriodicRun(mondayNoonUtc, 'per_week', trigger({ notify_week_day: 7, notify_week_hour: 10 }), 'UTC')!).toISOString()).toBe('2026-01-11T10:00:00.000Z');
    expect(new Date(nextPeriodicRun(mondayNoonUtc, 'per_week', trigger({ notify_week_day: 1, notify_week_hour: 10 }), 'UTC')!).toISOString()).toBe('2026-01-12T10:00:00.000Z');
  });

  it('per_month: day 31 runs only in months that have one', () => {
    const feb1 = Date.parse('2026-02-01T00:00:00Z');
    expect(new Date(nextPeriodicRun(feb1, 'per_month', trigger({ notify_month_day: 31, notify_month_hour: 8 }), 'UTC')!).toISOString()).toBe('2026-03-31T08:00:00.000Z');
  });

  it('per_update has no schedule', () => {
    expect(nextPeriodicRun(mondayNoonUtc, 'per_update', trigger({}), 'UTC')).toBeNull();
  });
});

describe('automation write source (loop protection)', () => {
  it('reads back the rule and depth it wrote, and nothing from other writers', () => {
    expect(automationSource(automationApp(12, 2))).toEqual({ ruleId: 12, depth: 2 });
    expect(automationSource(null)).toBeNull();
    expect(automationSource('my-app')).toBeNull();
    expect(automationSource('automation:x:1')).toBeNull();
  });
});
