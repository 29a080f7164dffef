import { describe, expect, it } from 'vitest';
import {
  addDays,
  addMonths,
  instantOfLocal,
  isValidTimeZone,
  isoWeekday,
  localDayKey,
  monthEnd,
  monthStart,
  nextKey,
  previousKey,
  validDayKey,
} from './dates.js';

describe('calendar keys', () => {
  it('adds days across months, years and leap days', () => {
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2023-02-28', 1)).toBe('2023-03-01');
    expect(addDays('2024-12-31', 1)).toBe('2025-01-01');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
    expect(addDays('2024-03-06', -100_000)).toBe('1750-05-22');
    expect(addDays('0050-01-01', 1)).toBe('0050-01-02');
  });

  it('adds months clamping the day to the month length', () => {
    expect(addMonths('2024-01-31', 1)).toBe('2024-02-29');
    expect(addMonths('2023-01-31', 1)).toBe('2023-02-28');
    expect(addMonths('2024-03-31', -1)).toBe('2024-02-29');
    expect(addMonths('2024-01-15', -1)).toBe('2023-12-15');
    expect(addMonths('2024-12-15', 1)).toBe('2025-01-15');
    expect(addMonths('2024-05-31', 1)).toBe('2024-06-30');
  });

  it('knows ISO weekdays (Monday = 1, Sunday = 7)', () => {
    expect(isoWeekday('2024-03-04')).toBe(1);
    expect(isoWeekday('2024-03-06')).toBe(3);
    expect(isoWeekday('2024-03-10')).toBe(7);
  });

  it('finds month bounds', () => {
    expect(monthStart('2024-02-17')).toBe('2024-02-01');
    expect(monthEnd('2024-02-17')).toBe('2024-02-29');
    expect(monthEnd('2100-02-01')).toBe('2100-02-28');
    expect(monthEnd('2000-02-01')).toBe('2000-02-29');
    expect(monthEnd('2024-04-30')).toBe('2024-04-30');
  });

  it('steps day and minute keys', () => {
    expect(nextKey('2024-12-31', 'day')).toBe('2025-01-01');
    expect(previousKey('2024-03-01', 'day')).toBe('2024-02-29');
    expect(nextKey('2024-12-31 23:59', 'minute')).toBe('2025-01-01 00:00');
    expect(previousKey('2024-03-01 00:00', 'minute')).toBe('2024-02-29 23:59');
    expect(nextKey('2024-03-06 09:05', 'minute')).toBe('2024-03-06 09:06');
  });

  it('accepts only real calendar days', () => {
    expect(validDayKey(2024, 2, 29)).toBe('2024-02-29');
    expect(validDayKey(2023, 2, 29)).toBeNull();
    expect(validDayKey(2024, 13, 1)).toBeNull();
    expect(validDayKey(2024, 4, 31)).toBeNull();
    expect(validDayKey(0, 1, 1)).toBeNull();
    expect(validDayKey(2024, 1, 0)).toBeNull();
  });
});

describe('time zones', () => {
  it('computes the local day of an instant', () => {
    const t = Date.UTC(2024, 2, 5, 12, 30);
    expect(localDayKey(t, 'UTC')).toBe('2024-03-05');
    expect(localDayKey(t, 'Pacific/Auckland')).toBe('2024-03-06');
    expect(localDayKey(Date.UTC(2024, 2, 5, 3, 0), 'America/Los_Angeles')).toBe('2024-03-04');
  });

  it('finds the instant of a local midnight', () => {
    expect(instantOfLocal('2024-03-06', 'UTC')).toBe(Date.UTC(2024, 2, 6));
    expect(instantOfLocal('2024-03-06', 'Pacific/Auckland')).toBe(Date.UTC(2024, 2, 5, 11));
    expect(instantOfLocal('2024-07-01', 'Pacific/Auckland')).toBe(Date.UTC(2024, 5, 30, 12));
    expect(instantOfLocal('2024-03-06', 'Asia/Kolkata')).toBe(Date.UTC(2024, 2, 5, 18, 30));
    expect(instantOfLocal('2024-03-06 01:30', 'Pacific/Auckland')).toBe(Date.UTC(2024, 2, 5, 12, 30));
  });

  it('maps a local time skipped by DST to the moment the clock jumps', () => {
    // New York, 2024-03-10: 02:00 EST → 03:00 EDT at 07:00Z.
    expect(instantOfLocal('2024-03-10 02:30', 'America/New_York')).toBe(Date.UTC(2024, 2, 10, 7));
    expect(instantOfLocal('2024-03-10 03:00', 'America/New_York')).toBe(Date.UTC(2024, 2, 10, 7));
    // Santiago, 2024-09-08: midnight itself does not exist (00:00 -04 → 01:00 -03 at 04:00Z).
    expect(instantOfLocal('2024-09-08', 'America/Santiago')).toBe(Date.UTC(2024, 8, 8, 4));
    expect(localDayKey(Date.UTC(2024, 8, 8, 4), 'America/Santiago')).toBe('2024-09-08');
    expect(localDayKey(Date.UTC(2024, 8, 8, 4) - 1, 'America/Santiago')).toBe('2024-09-07');
  });

  it('takes the earlier occurrence of a local time repeated by DST', () => {
    // New York, 2024-11-03: 01:00–02:00 happens twice; the first is EDT (05:00Z + 30 min).
    expect(instantOfLocal('2024-11-03 01:30', 'America/New_York')).toBe(Date.UTC(2024, 10, 3, 5, 30));
    expect(instantOfLocal('2024-11-04', 'America/New_York')).toBe(Date.UTC(2024, 10, 4, 5));
  });

  it('rejects unknown zones', () => {
    expect(isValidTimeZone('Europe/Berlin')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
    expect(() => localDayKey(0, 'Mars/Olympus')).toThrow(/invalid time zone/);
  });
});
