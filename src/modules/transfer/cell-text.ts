/** Characters that make a spreadsheet read a cell as a formula (OWASP CSV injection; tab and CR too). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A cell as spreadsheet text, escaped against formula injection: a string that begins with `=`, `+`,
 * `-`, `@`, a tab or a carriage return gets a leading `'`, which spreadsheets show as text.
 */
export function safeText(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/**
 * A presented cell value (as the rows API answers it, columns by name) as one spreadsheet value:
 * numbers and booleans stay typed; lists (multiple select, collaborators, links, files, images)
 * become their display texts joined by `, `; every string passes `safeText`.
 */
export function cellValue(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') return safeText(value);
  if (Array.isArray(value)) return safeText(value.map(itemText).filter((t) => t !== '').join(', '));
  return safeText(itemText(value));
}

function itemText(item: unknown): string {
  if (item === null || item === undefined) return '';
  if (typeof item !== 'object') return String(item);
  const o = item as Record<string, unknown>;
  for (const field of ['display_value', 'name', 'url', 'email', 'text']) {
    if (typeof o[field] === 'string') return o[field];
  }
  return JSON.stringify(item);
}
