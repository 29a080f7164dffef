/** ISO-8601 with second precision and offset, as dtable-web renders timestamps; null → "". */
export function isoSeconds(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '';
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}
