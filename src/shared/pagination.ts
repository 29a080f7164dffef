/**
 * `page`/`per_page` as the original parses them: both must be integers, otherwise both fall back
 * to the defaults. Unlike the original, values are clamped (page ≥ 1, 1 ≤ per_page ≤ maxPerPage).
 */
export interface Page {
  page: number;
  perPage: number;
  offset: number;
}

export function parsePage(
  query: { page?: unknown; per_page?: unknown },
  defaults = { page: 1, perPage: 25 },
  maxPerPage = 100,
): Page {
  const page = toInt(query.page ?? String(defaults.page));
  const perPage = toInt(query.per_page ?? String(defaults.perPage));
  if (page === null || perPage === null) {
    return { page: defaults.page, perPage: defaults.perPage, offset: (defaults.page - 1) * defaults.perPage };
  }
  const p = Math.max(1, page);
  const pp = Math.min(Math.max(1, perPage), maxPerPage);
  return { page: p, perPage: pp, offset: (p - 1) * pp };
}

function toInt(value: unknown): number | null {
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string' && /^-?\d{1,9}$/.test(value.trim())) return Number(value.trim());
  return null;
}
