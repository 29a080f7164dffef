/**
 * A row id's key in the operation log's row index (`operation_log_rows.row_key`): a 53-bit hash, so
 * the index holds three integers per entry instead of a 22-character text key (a 1,000-row write adds
 * 1,000 entries). Safe as a JS number on both engines. Two rows of a base sharing a key (about 1 in 18 quadrillion pairs) only cost a reader an
 * operation it drops when it finds the row absent from it.
 */
export function rowKey(rowId: string): number {
  // cyrb53 (public domain): two 32-bit multiply-xorshift lanes.
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < rowId.length; i++) {
    const ch = rowId.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
