import { badRequest } from '../../shared/errors.js';

/**
 * The keys a column's `data` may carry, per column type, and the type of each (issue 17): unknown keys
 * are dropped, a known key of the wrong type is a 400 naming it. Values within a type (enums, ranges)
 * are checked by `normalizeColumnData` (column-types.ts) and the formula modules; keys the server
 * computes (`result_type`, `operated_columns`, link ids…) are listed so stored data passes unchanged.
 * The key lists follow the original's column data (OpenAPI `*_column_format`, contract §8.5).
 */

interface Rule {
  check(value: unknown): boolean;
  expected: string;
}

const rule = (expected: string, check: (value: unknown) => boolean): Rule => ({ expected, check });
const STRING = rule('a string', (v) => typeof v === 'string');
const BOOLEAN = rule('true or false', (v) => typeof v === 'boolean');
const NUMBER = rule('a number', (v) => typeof v === 'number' && Number.isFinite(v));
const INTEGER = rule('an integer', (v) => typeof v === 'number' && Number.isInteger(v));
const ARRAY = rule('a list', (v) => Array.isArray(v));
const OBJECT = rule('an object', (v) => typeof v === 'object' && v !== null && !Array.isArray(v));
const STRING_LIST = rule('a list of strings', (v) => Array.isArray(v) && v.every((x) => typeof x === 'string'));
/** A default value is written like a cell (coerced by the column's write rules), so any JSON value. */
const ANY = rule('any value', () => true);
const NAME = rule('a string or number', (v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)));

type Schema = Readonly<Record<string, Rule>>;

const DEFAULTS: Schema = { enable_fill_default_value: BOOLEAN, default_value: ANY };
/** How numbers are shown (number columns, and formulas whose result is a number). */
const NUMBER_DISPLAY: Schema = {
  format: STRING,
  decimal: STRING,
  thousands: STRING,
  precision: INTEGER,
  enable_precision: BOOLEAN,
  currency_symbol: STRING,
  currency_symbol_position: STRING,
};
/** Computed by the server for formula and link-formula columns. */
const COMPUTED_RESULT: Schema = { result_type: STRING, operated_columns: STRING_LIST, array_type: STRING, array_data: ANY };
const LINK_FORMULA: Schema = {
  formula: STRING,
  link_column_key: STRING,
  level1_linked_column_key: STRING,
  level2_linked_column_key: STRING,
  summary_column_key: STRING,
  summary_method: STRING,
  searched_column_key: STRING,
  comparison_column_key: STRING,
  // The OpenAPI document's spellings (names instead of keys).
  link_column: STRING,
  level1_linked_column: STRING,
  level2_linked_column: STRING,
  summary_column: STRING,
  searched_column: STRING,
  comparison_column: STRING,
};

const SCHEMAS: Readonly<Record<string, Schema>> = {
  text: DEFAULTS,
  'long-text': DEFAULTS,
  email: DEFAULTS,
  url: DEFAULTS,
  checkbox: DEFAULTS,
  number: { ...NUMBER_DISPLAY, ...DEFAULTS },
  date: { format: STRING, default_date_type: STRING, ...DEFAULTS },
  duration: { format: STRING, duration_format: STRING, ...DEFAULTS },
  'single-select': { options: ARRAY, cascade_column_key: STRING, cascade_settings: OBJECT, ...DEFAULTS },
  'multiple-select': { options: ARRAY, cascade_column_key: STRING, cascade_settings: OBJECT, ...DEFAULTS },
  collaborator: { enable_send_notification: BOOLEAN, ...DEFAULTS },
  rate: { rate_max_number: INTEGER, rate_style_color: STRING, rate_style_type: STRING, ...DEFAULTS },
  // What a request names the two tables by; the stored link data is built by the server (structure.ts).
  link: { table: STRING, other_table: STRING, table_id: STRING, other_table_id: STRING },
  creator: {},
  'last-modifier': {},
  ctime: { format: STRING },
  mtime: { format: STRING },
  'auto-number': { format: STRING, digits: INTEGER, prefix_type: STRING, prefix: STRING, max_used_auto_number: INTEGER },
  file: {},
  image: {},
  geolocation: { geo_format: STRING },
  button: { button_type: STRING, button_name: STRING, button_color: STRING, table_id: STRING, button_action_list: ARRAY },
  'digital-sign': {},
  formula: { formula: STRING, ...NUMBER_DISPLAY, ...COMPUTED_RESULT },
  'link-formula': { ...LINK_FORMULA, ...NUMBER_DISPLAY, ...COMPUTED_RESULT },
};

/** The keys of a select option. */
const OPTION: Schema = { id: STRING, name: NAME, color: STRING, textColor: STRING, borderColor: STRING };

/** The allowed keys of `data` for a column type (empty for types without settings). */
export function columnDataKeys(type: string): readonly string[] {
  return Object.keys(SCHEMAS[type] ?? {});
}

function parseObject(raw: unknown): Record<string, unknown> | null {
  if (raw === undefined || raw === null || raw === '') return null;
  let value = raw;
  if (typeof raw === 'string') {
    // Form bodies carry column_data as a JSON string.
    try {
      value = JSON.parse(raw);
    } catch {
      throw badRequest('column_data invalid.');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest('column_data invalid.');
  return value as Record<string, unknown>;
}

/** Keep the keys of `schema` (null counts as absent), refusing a wrong type with a 400 naming `where.key`. */
function pickKeys(input: Record<string, unknown>, schema: Schema, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(input)) {
    const checker = Object.hasOwn(schema, key) ? schema[key] : undefined;
    if (!checker) continue;
    const value = input[key];
    if (value !== null && !checker.check(value)) throw badRequest(`${where}.${key} invalid: expected ${checker.expected}.`);
    out[key] = value;
  }
  return out;
}

/**
 * A request's `column_data` for a column of `type`, with unknown keys (also of select options)
 * dropped; undefined when none was given. 400 `column_data.<key> invalid: …` for a known key of the
 * wrong type. The result goes on to `normalizeColumnData` (or the link builder).
 */
export function checkColumnData(type: string, raw: unknown): Record<string, unknown> | undefined {
  const input = parseObject(raw);
  if (input === null) return undefined;
  const data = pickKeys(input, SCHEMAS[type] ?? {}, 'column_data');
  if (Array.isArray(data.options)) {
    data.options = data.options.map((option, index) =>
      typeof option === 'object' && option !== null && !Array.isArray(option) ? pickKeys(option as Record<string, unknown>, OPTION, `column_data.options.${index}`) : option,
    );
  }
  return data;
}

/** The keys of one view filter, and of a group of filters. */
const FILTER: Schema = { column_key: STRING, column_name: STRING, filter_predicate: STRING, filter_term: ANY, filter_term_modifier: STRING };
const FILTER_GROUP: Schema = { filters: ARRAY, filter_conjunction: STRING };
const FILTER_TERM = rule('a string, number, true/false or a list of strings and numbers', (v) =>
  ['string', 'number', 'boolean'].includes(typeof v) || (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')),
);

/**
 * A view's `filters` with unknown keys dropped from every filter and group (nested groups too);
 * 400 `filters.<i>.<key> invalid: …` for a known key of the wrong type. Items that are not objects
 * are left for the filter parser to refuse.
 */
export function checkViewFilters(filters: readonly unknown[], where = 'filters'): unknown[] {
  return filters.map((item, index) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return item;
    const entry = item as Record<string, unknown>;
    const path = `${where}.${index}`;
    if (Array.isArray(entry.filters)) {
      const group = pickKeys(entry, FILTER_GROUP, path);
      return { ...group, filters: checkViewFilters(entry.filters, `${path}.filters`) };
    }
    const filter = pickKeys(entry, FILTER, path);
    if (filter.filter_term !== undefined && filter.filter_term !== null && !FILTER_TERM.check(filter.filter_term)) {
      throw badRequest(`${path}.filter_term invalid: expected ${FILTER_TERM.expected}.`);
    }
    return filter;
  });
}
