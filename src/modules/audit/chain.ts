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
  const { created_at, action, actor, ip, base_id, target, detail } = fields;
  return sha256Hex(canonicalJson({ created_at, action, actor, ip, base_id, target, detail }));
}

/** The chain link: sha256 of the previous row's hash and this row's fields with its sequence. */
export function rowHash(prevHash: string, fields: ChainedFields): string {
  const { seq, created_at, action, actor, ip, base_id, target, detail } = fields;
  return sha256Hex(prevHash + canonicalJson({ seq, created_at, action, actor, ip, base_id, target, detail }));
}
