/** Dates in (written values → stored wall clock in TIME_ZONE) and out (RFC 3339 with the zone's offset). */
export { configureTimeZone, zoneGeneration, timeZone, wallClockAt, instantOf, offsetMinutesAt, utcMs, type WallClock } from './zone.js';
export { presentDate, presentCell, isDateColumn, instantText, offsetText } from './present.js';
export { parseDateInput, fromDisplayFormat, type DateInputOptions } from './parse.js';
export { parseInstant } from './instant.js';
