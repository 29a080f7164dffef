import { sha256Hex } from '../../shared/crypto.js';
import type { AuditLogTable } from './audit.table.js';

/** JSON with object keys sorted at every depth, so the same row always hashes alike. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The fields a row's hash covers (everything but its id, the hashes and the digest). */
export type ChainedFields = Omit<AuditLogTable, 'id' | 'prev_hash' | 'hash' | 'digest'>;
/** The fields of an appended row before it has a place in the chain. */
export type EntryFields = Omit<ChainedFields, 'seq'>;

/** sha256 of a row's fields, taken when it is appended: detects an edit made before it was sealed. */
export function fieldsDigest(fields: EntryFields): string {
  return sha256Hex(`{${fieldsJson(fields)}}`);
}

/** The chain link: sha256 of the previous row's hash and this row's fields with its sequence. */
export function rowHash(prevHash: string, fields: ChainedFields): string {
  // `seq` sorts after `ip`, before `target`.
  const { seq, target } = fields;
  return sha256Hex(`${prevHash}{${fieldsJson(fields, `,"seq":${JSON.stringify(seq)}`)},"target":${JSON.stringify(target)}}`);
}

/**
 * canonicalJson of the fields (flat: strings, numbers, null), written out in its key order without
 * sorting: this runs for every appended row. Without `target` when `beforeTarget` is given (the caller
 * adds `seq` there and `target` after it); chain.test.ts checks both against canonicalJson.
 */
function fieldsJson(fields: EntryFields, beforeTarget?: string): string {
  const { action, actor, base_id, created_at, detail, ip, target } = fields;
  const head = `"action":${JSON.stringify(action)},"actor":${JSON.stringify(actor)},"base_id":${JSON.stringify(base_id ?? null)},"created_at":${JSON.stringify(created_at)},"detail":${JSON.stringify(detail)},"ip":${JSON.stringify(ip)}`;
  return beforeTarget === undefined ? `${head},"target":${JSON.stringify(target)}` : head + beforeTarget;
}
