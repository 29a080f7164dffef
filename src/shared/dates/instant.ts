/** An ISO 8601 date-time with an explicit offset (`Z`, `+02:00`), optionally with seconds and fraction. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/**
 * An instant given by an API client, in epoch milliseconds: an ISO 8601 date-time with an offset,
 * or a number of epoch seconds (the unit of `op_time`; fractions allowed). Null when it is neither:
 * a time without an offset is ambiguous and refused.
 */
export function parseInstant(input: unknown): number | null {
  if (typeof input === 'number') return Number.isFinite(input) && input >= 0 && input < 1e11 ? Math.round(input * 1000) : null;
  if (typeof input !== 'string' || input.length > 40) return null;
  const text = input.trim();
  if (/^\d{1,11}(\.\d{1,6})?$/.test(text)) return parseInstant(Number(text));
  if (!ISO_INSTANT.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
