import { describe, expect, it } from 'vitest';
import { addDays, localDay, nextRunAt } from './zoned-time.js';

describe('zoned time', () => {
  it('localDay is the calendar day in the zone', () => {
    expect(localDay(Date.UTC(2026, 0, 5, 23, 30), 'UTC')).toBe('2026-01-05');
    expect(localDay(Date.UTC(2026, 0, 5, 23, 30), 'Europe/Berlin')).toBe('2026-01-06');
    expect(localDay(Date.UTC(2026, 0, 5, 3, 0), 'America/New_York')).toBe('2026-01-04');
  });

  it('addDays crosses months and years', () => {
    expect(addDays('2026-02-27', 2)).toBe('2026-03-01');
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-01-01', -1)).toBe('2025-12-31');
  });

  it('nextRunAt is the next local notify hour, strictly after', () => {
    const at10utc = Date.UTC(2026, 0, 5, 10);
    expect(nextRunAt(at10utc, 12, 'Europe/Berlin')).toBe(Date.UTC(2026, 0, 5, 11));
    expect(nextRunAt(at10utc, 9, 'Europe/Berlin')).toBe(Date.UTC(2026, 0, 6, 8));
    expect(nextRunAt(Date.UTC(2026, 0, 6, 8), 9, 'Europe/Berlin')).toBe(Date.UTC(2026, 0, 7, 8));
    expect(nextRunAt(at10utc, 0, 'UTC')).toBe(Date.UTC(2026, 0, 6, 0));
    expect(nextRunAt(Date.UTC(2026, 0, 5, 3, 29), 9, 'Asia/Kolkata')).toBe(Date.UTC(2026, 0, 5, 3, 30));
  });

  it('follows daylight saving time', () => {
    // Berlin switches to CEST on 2026-03-29: 9:00 local is 08:00 UTC before and 07:00 UTC after.
    expect(nextRunAt(Date.UTC(2026, 2, 28, 12), 9, 'Europe/Berlin')).toBe(Date.UTC(2026, 2, 29, 7));
    // 02:00 does not exist that day: the run moves to the next valid instant (03:00 CEST).
    expect(nextRunAt(Date.UTC(2026, 2, 28, 12), 2, 'Europe/Berlin')).toBe(Date.UTC(2026, 2, 29, 1));
  });
});
