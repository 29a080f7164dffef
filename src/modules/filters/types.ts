/** A column as the filter engine needs it (a subset of the metadata column object). */
export type FilterColumn = { key: string; name: string; type: string; data: unknown };

/** A filter document as views, notification rules and the filtered-rows endpoint carry it. */
export type FilterSpec = { filters: unknown[]; filter_conjunction?: unknown };

export type FilterContext = {
  /** ms epoch; "today" is its calendar day in `timeZone`. */
  now: number;
  /** IANA zone, 'UTC' by default. */
  timeZone: string;
  /** Virtual id of the user `include_me` / `is_current_user_ID` refer to; without one those match nothing. */
  currentUser?: string;
};

/** A row as stored in `base_rows` (the contract's in-memory shape). */
export type StoredRow = {
  _id: string;
  _ctime: number;
  _mtime: number;
  _creator: string;
  _last_modifier: string;
  data: Record<string, unknown>;
};

export type UserField = 'creator' | 'last_modifier';
export type TimeField = 'ctime' | 'mtime';
export type DateUnit = 'day' | 'minute';
export type NumberComparison = '=' | '<' | '<=' | '>' | '>=';

/** Where a column's value lives: a key of `data`, or one of the row's own columns. */
export type Source = { kind: 'cell'; key: string } | { kind: 'user'; field: UserField } | { kind: 'time'; field: TimeField };
export type CellSource = Extract<Source, { kind: 'cell' }>;
export type UserSource = Extract<Source, { kind: 'user' }>;
export type TimeSource = Extract<Source, { kind: 'time' }>;

/**
 * Context-free conditions. Both `matchesRow` and `filterToSql` interpret exactly this tree, one case
 * per leaf, which is what keeps the two paths identical.
 */
export type Condition =
  | { op: 'and' | 'or'; items: Condition[] }
  | { op: 'not'; item: Condition }
  | { op: 'const'; value: boolean }
  /** missing, null, "" or [] (user / time columns: null or "") */
  | { op: 'empty'; src: Source }
  /** string cell containing `folded` after ASCII lower-casing */
  | { op: 'textContains'; key: string; folded: string }
  /** string cell equal to one of `values` (exact), or a user column equal to one of them */
  | { op: 'oneOf'; src: CellSource | UserSource; values: string[] }
  /** number cell compared with `value` */
  | { op: 'numCompare'; key: string; cmp: NumberComparison; value: number }
  | { op: 'isTrue'; key: string }
  /** array cell with any / all of `values` among its string elements, or exactly that set */
  | { op: 'hasAny' | 'hasAll' | 'hasExactly'; key: string; values: string[] }
  /** string cell starting with `YYYY-MM-DD` */
  | { op: 'dateValid'; key: string }
  /** valid date cell whose day (or minute) key lies in [from, to], bounds inclusive, null = open */
  | { op: 'dateKeyRange'; key: string; unit: DateUnit; from: string | null; to: string | null }
  /** ctime / mtime in [from, until) ms */
  | { op: 'timeRange'; field: TimeField; from: number | null; until: number | null };

/** Date predicates with a modifier, resolved against `ctx.now` / `ctx.timeZone` at use. */
export type DateRule = {
  op: 'dateRule';
  src: CellSource | TimeSource;
  predicate: DatePredicate;
  modifier: string;
  /** days for number_of_days_* / the_*_numbers_of_days, a key for exact_date*, else null */
  term: number | string | null;
};

/** `include_me` / `is_current_user_ID`, resolved against `ctx.currentUser` at use. */
export type CurrentUserRule = { op: 'currentUser'; test: 'text'; key: string } | { op: 'currentUser'; test: 'array'; key: string } | { op: 'currentUser'; test: 'user'; field: UserField };

export type DatePredicate = 'is' | 'is_not' | 'is_after' | 'is_before' | 'is_on_or_before' | 'is_on_or_after' | 'is_within';

/** What `parseFilters` produces: conditions that may still depend on the context. */
export type ParsedCondition =
  | Exclude<Condition, { op: 'and' | 'or' } | { op: 'not' }>
  | { op: 'and' | 'or'; items: ParsedCondition[] }
  | { op: 'not'; item: ParsedCondition }
  | DateRule
  | CurrentUserRule;

export interface CompiledFilter {
  /** null: no effective condition, every row matches */
  readonly root: ParsedCondition | null;
  readonly columnKeys: readonly string[];
  readonly usesCurrentUser: boolean;
}

export type ParseResult = { ok: true; filter: CompiledFilter } | { ok: false; error: string };
