import { afterEach, describe, expect, it } from 'vitest';
import { configureTimeZone, instantOf, parseDateInput, presentCell, presentDate } from './index.js';

describe('shared dates', () => {
  afterEach(() => configureTimeZone('UTC'));

  it('UTC: stored wall clock shown with +00:00, RFC 3339 as it is, other values untouched', () => {
    expect(presentDate('2030-06-20')).toBe('2030-06-20T00:00:00+00:00');
    expect(presentDate('2030-06-20 23:55')).toBe('2030-06-20T23:55:00+00:00');
    expect(presentDate('2030-06-21T00:00:00+02:00')).toBe('2030-06-21T00:00:00+02:00');
    expect(presentDate('not a date')).toBe('not a date');
    expect(presentDate(42)).toBe(42);
  });

  it('the offset follows the zone in force at that date, and a change of zone is seen at once', () => {
    configureTimeZone('America/New_York');
    expect(presentDate('2030-06-20')).toBe('2030-06-20T00:00:00-04:00');
    expect(presentDate('2030-01-20')).toBe('2030-01-20T00:00:00-05:00');
    configureTimeZone('Asia/Kolkata');
    expect(presentDate('2030-06-20')).toBe('2030-06-20T00:00:00+05:30');
  });

  it('instantOf: the repeated hour is its first occurrence, the skipped hour reads with the offset before', () => {
    configureTimeZone('Europe/Berlin');
    expect(new Date(instantOf({ year: 2030, month: 10, day: 27, hour: 2, minute: 30, second: 0 })).toISOString()).toBe('2030-10-27T00:30:00.000Z');
    expect(new Date(instantOf({ year: 2030, month: 10, day: 27, hour: 1, minute: 30, second: 0 })).toISOString()).toBe('2030-10-26T23:30:00.000Z');
    expect(new Date(instantOf({ year: 2030, month: 3, day: 31, hour: 2, minute: 30, second: 0 })).toISOString()).toBe('2030-03-31T01:30:00.000Z');
  });

  it('parseDateInput converts offsets into the zone; day-only keeps the written day', () => {
    configureTimeZone('Pacific/Auckland');
    expect(parseDateInput('2030-06-20T23:30:00Z')).toBe('2030-06-21 11:30');
    expect(parseDateInput('2030-06-20T23:30:00Z', { dateOnly: true })).toBe('2030-06-20');
    expect(parseDateInput('20/06/2030 7:05', { format: 'DD/MM/YYYY HH:mm' })).toBe('2030-06-20 07:05');
    expect(parseDateInput('2030-02-29')).toBeNull();
  });

  it('presentCell: date columns and date formulas only', () => {
    expect(presentCell('date', null, '2030-06-20')).toBe('2030-06-20T00:00:00+00:00');
    expect(presentCell('formula', { result_type: 'date' }, '2030-06-20')).toBe('2030-06-20T00:00:00+00:00');
    expect(presentCell('formula', { result_type: 'string' }, '2030-06-20')).toBe('2030-06-20');
    expect(presentCell('text', null, '2030-06-20')).toBe('2030-06-20');
  });
});
