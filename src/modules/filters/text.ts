/**
 * Case folding for `contains`: ASCII letters only. SQLite's lower() folds only A–Z and PostgreSQL's
 * depends on the collation, so folding exactly A–Z (lower(… COLLATE "C") on PostgreSQL) is the one rule
 * all three paths share: "ABC" contains "b", but "Ä" does not contain "ä". No Unicode normalization.
 */
export function asciiLower(value: string): string {
  return value.replace(/[A-Z]+/g, (run) => run.toLowerCase());
}
