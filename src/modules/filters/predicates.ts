/**
 * Which predicates each column type supports, in the order the original lists them in its error message
 * (EV `sql_generator.py`, `SUPPORT_FILTER_PREDICATE` of each operator class).
 */

export type Family = 'text' | 'number' | 'checkbox' | 'date' | 'single-select' | 'multiple-select' | 'collaborator' | 'creator' | 'file';

const PREDICATES: Record<Family, readonly string[]> = {
  text: ['contains', 'does_not_contain', 'is', 'is_not', 'is_empty', 'is_not_empty', 'is_current_user_ID'],
  number: ['equal', 'not_equal', 'greater', 'greater_or_equal', 'less', 'less_or_equal', 'is_empty', 'is_not_empty'],
  checkbox: ['is'],
  date: ['is', 'is_not', 'is_after', 'is_before', 'is_on_or_before', 'is_on_or_after', 'is_empty', 'is_not_empty', 'is_within'],
  'single-select': ['is_any_of', 'is_none_of', 'is', 'is_not', 'is_empty', 'is_not_empty'],
  'multiple-select': ['has_any_of', 'has_none_of', 'has_all_of', 'is_exactly', 'is_empty', 'is_not_empty'],
  collaborator: ['has_all_of', 'is_exactly', 'is_empty', 'is_not_empty', 'has_any_of', 'has_none_of', 'include_me'],
  creator: ['contains', 'does_not_contain', 'is', 'is_not', 'include_me'],
  file: ['is_empty', 'is_not_empty'],
};

const FAMILY_OF_TYPE: Record<string, Family> = {
  text: 'text',
  url: 'text',
  email: 'text',
  'auto-number': 'text',
  geolocation: 'text',
  number: 'number',
  duration: 'number',
  rate: 'number',
  checkbox: 'checkbox',
  date: 'date',
  ctime: 'date',
  mtime: 'date',
  'single-select': 'single-select',
  'department-single-select': 'single-select',
  'multiple-select': 'multiple-select',
  collaborator: 'collaborator',
  creator: 'creator',
  'last-modifier': 'creator',
  file: 'file',
  image: 'file',
  'long-text': 'file',
};

/** Formula and link-formula cells are materialized in the row with their result type (docs/formulas.md). */
const FAMILY_OF_RESULT: Record<string, Family> = {
  number: 'number',
  string: 'text',
  bool: 'checkbox',
  date: 'date',
  array: 'multiple-select',
};

/**
 * The family of a column type (for formula and link-formula columns: of their `data.result_type`), or
 * null when the engine cannot filter on it. That includes `link`: link cells live in `base_links`,
 * outside the row, so neither a stored row nor a single-table query can see them; filters on link
 * (and button, digital-sign) columns are refused with the contract's "does not support" error, listing
 * no predicates.
 */
export function familyOf(columnType: string, data?: unknown): Family | null {
  if (columnType === 'formula' || columnType === 'link-formula') {
    const result = (data as { result_type?: unknown } | null | undefined)?.result_type;
    return typeof result === 'string' && Object.hasOwn(FAMILY_OF_RESULT, result) ? FAMILY_OF_RESULT[result]! : null;
  }
  return Object.hasOwn(FAMILY_OF_TYPE, columnType) ? (FAMILY_OF_TYPE[columnType] ?? null) : null;
}

export function predicatesOf(family: Family | null): readonly string[] {
  return family ? PREDICATES[family] : [];
}

/** The original's message (a Python list repr for the predicates), prefixed as dtable-server does. */
export function unsupportedPredicate(columnName: string, columnType: string, predicate: string, available: readonly string[]): string {
  const list = `[${available.map((p) => `'${p}'`).join(', ')}]`;
  return `Filter on ${columnName} invalid: ${columnType} type column '${columnName}' does not support '${predicate}', available predicates are ${list}`;
}

export const WITHIN_MODIFIERS: readonly string[] = [
  'the_past_week',
  'the_past_month',
  'the_past_year',
  'this_week',
  'this_month',
  'this_year',
  'the_next_week',
  'the_next_month',
  'the_next_year',
  'the_next_numbers_of_days',
  'the_past_numbers_of_days',
];

export const DAY_MODIFIERS: readonly string[] = [
  'today',
  'tomorrow',
  'yesterday',
  'one_week_ago',
  'one_week_from_now',
  'one_month_ago',
  'one_month_from_now',
  'number_of_days_ago',
  'number_of_days_from_now',
  'exact_date',
  'exact_date_time',
];

/** Modifiers whose `filter_term` is a number of days. */
export const DAY_COUNT_MODIFIERS: readonly string[] = ['number_of_days_ago', 'number_of_days_from_now', 'the_next_numbers_of_days', 'the_past_numbers_of_days'];
