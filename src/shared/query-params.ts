import { badRequest } from './errors.js';

/** A whole number in [min, max] from a query string, or `fallback` when absent. */
export function intParam(value: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,16}$/.test(value) || Number(value) < min || Number(value) > max) throw badRequest(`${name} invalid: a whole number from ${min} to ${max}.`);
  return Number(value);
}

/** A time filter: milliseconds, seconds (10 digits, as the original's op_time in db-operations), or an ISO date. */
export function timeParam(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (/^\d{1,10}$/.test(value)) return Number(value) * 1000;
  if (/^\d{11,16}$/.test(value)) return Number(value);
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw badRequest(`${name} invalid: milliseconds, seconds or an ISO 8601 date.`);
  return ms;
}
