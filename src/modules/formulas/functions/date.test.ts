import { describe, expect, it } from 'vitest';
import { FormulaDate } from '../values.js';
import { run } from '../test-support.js';

const at = (iso: string) => new FormulaDate(Date.parse(iso));
/** A row: {D} = 2024-01-31 00:00 UTC, {T} = 2024-03-10 14:45:30 UTC, {S} = a date as text, {E} empty, {X} text. */
const ROW = { D: at('2024-01-31T00:00:00Z'), T: at('2024-03-10T14:45:30Z'), S: '2023-12-25', E: null, X: 'soon' };
const NOW = Date.parse('2024-01-31T23:30:00Z');

describe('date functions (UTC)', () => {
  it.each([
    ['date(2024, 2, 29)', '2024-02-29T00:00:00+00:00'],
    ['date(2023, 2, 29)', '2023-03-01T00:00:00+00:00'],
    ['date(2024, 13, 1)', '2025-01-01T00:00:00+00:00'],
    ['date(2024, 1, 0)', '2023-12-31T00:00:00+00:00'],
    ['date(2024, 1, 2, 3, 4, 5)', '2024-01-02T03:04:05+00:00'],
    ['date(0, 1, 1)', null],
    ['today()', '2024-01-31T00:00:00+00:00'],
    ['now()', '2024-01-31T23:30:00+00:00'],
    ['dateAdd({D}, 1, "months")', '2024-02-29T00:00:00+00:00'],
    ['dateAdd({D}, 13, "month")', '2025-02-28T00:00:00+00:00'],
    ['dateAdd({D}, -2, "months")', '2023-11-30T00:00:00+00:00'],
    ['dateAdd({D}, 1, "years")', '2025-01-31T00:00:00+00:00'],
    ['dateAdd(date(2024, 2, 29), 1, "years")', '2025-02-28T00:00:00+00:00'],
    ['dateAdd({D}, 2, "weeks")', '2024-02-14T00:00:00+00:00'],
    ['dateAdd({D}, 10)', '2024-02-10T00:00:00+00:00'],
    ['dateAdd({T}, 90, "minutes")', '2024-03-10T16:15:30+00:00'],
    ['dateAdd({T}, 1, "hours")', '2024-03-10T15:45:30+00:00'],
    ['dateAdd({T}, 30, "seconds")', '2024-03-10T14:46:00+00:00'],
    ['dateAdd({D}, 1, "fortnights")', null],
    ['dateAdd({E}, 1)', null],
    ['dateAdd({S}, 7)', '2024-01-01T00:00:00+00:00'],
    ['dateDif({S}, {D})', 37],
    ['dateDif({D}, {S})', -37],
    ['dateDif({S}, {D}, "M")', 1],
    ['dateDif("2020-02-29", "2024-02-28", "Y")', 3],
    ['dateDif("2020-02-29", "2024-02-29", "Y")', 4],
    ['datedif("2023-01-31", "2023-03-01", "M")', 1],
    ['datedif("2023-01-15", "2024-03-10", "YM")', 1],
    ['datedif("2023-01-15", "2024-03-10", "MD")', 24],
    ['datedif("2023-01-15", "2024-03-10", "YD")', 55],
    ['datedif({D}, {T}, "H")', 950],
    ['datedif({D}, {X})', null],
    ['day({D})', 31],
    ['month({T})', 3],
    ['year({S})', 2023],
    ['hour({T})', 14],
    ['minute({T})', 45],
    ['second({T})', 30],
    ['day({E})', null],
    ['day(5)', null],
    ['quarter({T})', 1],
    ['quarter("2024-10-01")', 4],
    ['weekday({D})', 4],
    ['weekday({D}, "Monday")', 3],
    ['weekday({D}, "Friday")', null],
    ['weeknum("2024-01-06")', 1],
    ['weeknum("2024-01-07")', 2],
    ['weeknum("2024-01-07", 2)', 1],
    ['weeknum("2024-12-31")', 53],
    ['isoweeknum("2021-01-03")', 53],
    ['isoweeknum("2024-12-30")', 1],
    ['isodate({T})', '2024-03-10'],
    ['isomonth({T})', '2024-03'],
    ['startofweek({D})', '2024-01-28T00:00:00+00:00'],
    ['startofweek({D}, "Monday")', '2024-01-29T00:00:00+00:00'],
    ['eomonth({D}, 1)', '2024-02-29T00:00:00+00:00'],
    ['eomonth({S}, 0)', '2023-12-31T00:00:00+00:00'],
    ['eomonth({S}, -10)', '2023-02-28T00:00:00+00:00'],
    ['networkdays("2024-01-01", "2024-01-31")', 23],
    ['networkdays("2024-01-01", "2024-01-31", "2024-01-01", "2024-01-15")', 21],
    ['networkdays("2024-01-31", "2024-01-01")', -23],
    ['networkdays("2024-01-06", "2024-01-07")', 0],
    ['workday("2024-01-05", 1)', '2024-01-08T00:00:00+00:00'],
    ['workday("2024-01-08", -1)', '2024-01-05T00:00:00+00:00'],
    ['workday("2024-01-05", 1, "2024-01-08")', '2024-01-09T00:00:00+00:00'],
    ['{D} + 1', '2024-02-01T00:00:00+00:00'],
    ['{D} - date(2023, 12, 25)', 37],
    ['{D} - {S}', null],
    ['{D} > {S}', true],
    ['{D} = date(2024, 1, 31)', true],
  ])('%s → %j', (formula, expected) => {
    expect(run(formula, ROW, { now: NOW })).toEqual(expected);
  });
});

describe('date functions in other zones', () => {
  it.each([
    // 23:30 UTC on Jan 31 is already Feb 1 in Berlin, still Jan 31 in New York.
    ['Europe/Berlin', 'today()', '2024-02-01T00:00:00+01:00'],
    ['America/New_York', 'today()', '2024-01-31T00:00:00-05:00'],
    ['Europe/Berlin', 'day(now())', 1],
    ['Pacific/Kiritimati', 'isodate(now())', '2024-02-01'],
    ['Pacific/Pago_Pago', 'isodate(now())', '2024-01-31'],
    // Date-only text is a calendar day in the zone, never shifted by the offset.
    ['America/Los_Angeles', 'day("2024-03-01")', 1],
    ['Asia/Tokyo', 'date(2024, 3, 1)', '2024-03-01T00:00:00+09:00'],
    // Month ends and DST: Berlin moves to summer time on 2024-03-31.
    ['Europe/Berlin', 'eomonth("2024-02-10", 1)', '2024-03-31T00:00:00+01:00'],
    ['Europe/Berlin', 'dateAdd("2024-03-30 12:00", 1, "days")', '2024-03-31T12:00:00+02:00'],
    ['Europe/Berlin', 'dateAdd("2024-03-30 12:00", 24, "hours")', '2024-03-31T13:00:00+02:00'],
    ['Europe/Berlin', 'dateDif("2024-03-30", "2024-04-01")', 2],
    ['Europe/Berlin', 'date(2024, 3, 31, 2, 30)', '2024-03-31T03:30:00+02:00'],
    // The hour repeated when summer time ends (2024-10-27 02:00–03:00 twice) means its first
    // occurrence, as a stored date-time cell of that wall clock is read (src/shared/dates).
    ['Europe/Berlin', 'date(2024, 10, 27, 2, 30)', '2024-10-27T02:30:00+02:00'],
    ['America/New_York', 'dateAdd("2024-01-31", 1, "months")', '2024-02-29T00:00:00-05:00'],
    ['America/New_York', 'hour("2024-07-01T12:00:00Z")', 8],
    ['Asia/Kolkata', 'text(date(2024, 5, 6, 7, 8), "DD/MM/YYYY HH:mm")', '06/05/2024 07:08'],
  ])('%s: %s → %j', (timeZone, formula, expected) => {
    expect(run(formula, ROW, { now: NOW, timeZone })).toEqual(expected);
  });
});
