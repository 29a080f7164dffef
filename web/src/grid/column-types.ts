import { t } from '../i18n';

/** What the console knows about each column type: editable or not, filter predicates, a label. */

/** The column types a person can add, with their names (from the catalogue: `columnType.<type>`). */
export const ADDABLE_TYPES: Array<[string, string]> = (['text', 'long-text', 'number', 'date', 'single-select', 'multiple-select', 'checkbox', 'collaborator', 'link', 'rate', 'url', 'email', 'duration', 'file', 'image', 'auto-number', 'ctime', 'mtime', 'creator', 'formula'] as const).map((type) => [type, t(`columnType.${type}`)]);

const READ_ONLY = new Set(['formula', 'link-formula', 'creator', 'ctime', 'mtime', 'last-modifier', 'auto-number', 'button', 'link', 'file', 'image', 'geolocation', 'digital-sign']);

export function isEditable(type: string): boolean {
  return !READ_ONLY.has(type);
}

const TEXT = ['contains', 'does_not_contain', 'is', 'is_not', 'is_empty', 'is_not_empty'];
const NUMBER = ['equal', 'not_equal', 'greater', 'greater_or_equal', 'less', 'less_or_equal', 'is_empty', 'is_not_empty'];
const DATE = ['is', 'is_not', 'is_after', 'is_before', 'is_on_or_before', 'is_on_or_after', 'is_empty', 'is_not_empty'];
const SINGLE = ['is', 'is_not', 'is_any_of', 'is_none_of', 'is_empty', 'is_not_empty'];
const MULTI = ['has_any_of', 'has_all_of', 'has_none_of', 'is_exactly', 'is_empty', 'is_not_empty'];

export function predicatesFor(type: string): string[] {
  switch (type) {
    case 'number':
    case 'duration':
    case 'rate':
      return NUMBER;
    case 'checkbox':
      return ['is'];
    case 'date':
    case 'ctime':
    case 'mtime':
      return DATE;
    case 'single-select':
      return SINGLE;
    case 'multiple-select':
    case 'collaborator':
      return MULTI;
    case 'creator':
    case 'last-modifier':
      return ['contains', 'does_not_contain', 'is', 'is_not'];
    case 'long-text':
    case 'file':
    case 'image':
      return ['is_empty', 'is_not_empty'];
    default:
      return TEXT;
  }
}

export const DATE_MODIFIERS = ['exact_date', 'today', 'tomorrow', 'yesterday', 'one_week_ago', 'one_week_from_now', 'one_month_ago', 'one_month_from_now', 'number_of_days_ago', 'number_of_days_from_now'];

export const OPTION_COLORS = ['#FFFCB5', '#FFEAB6', '#FFD9C8', '#DEFFC4', '#CDFCE5', '#CCF2FF', '#D8DEFF', '#F2D7FF', '#FFD6E7', '#E9E9E9'];

/** "1:30" → 5400 seconds; a bare number is minutes. */
export function parseDuration(text: string): number | null {
  const t = text.trim();
  if (!t) return null;
  const parts = t.split(':').map((p) => Number(p));
  if (parts.some((p) => !Number.isFinite(p))) return null;
  if (parts.length === 1) return Math.round(parts[0]! * 60);
  const [h = 0, m = 0, s = 0] = parts;
  return Math.round(h * 3600 + m * 60 + s);
}

export function formatDuration(value: unknown): string {
  if (typeof value !== 'number') return '';
  const h = Math.floor(value / 3600);
  const m = Math.floor((value % 3600) / 60);
  const s = value % 60;
  return `${h}:${String(m).padStart(2, '0')}${s ? `:${String(s).padStart(2, '0')}` : ''}`;
}
