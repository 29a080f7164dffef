import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson, fieldsDigest, rowHash } from './chain.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** The hashes write the fields' JSON out by hand (no sorting per row): it must stay canonicalJson's, or old rows stop verifying. */
describe('audit row hashes', () => {
  const rows = [
    { created_at: 1_700_000_000_000, action: 'webhook.create', actor: 'owner@example.com', ip: '::1', base_id: 7, target: 'POST /x', detail: '{"after":{"url":"http://h/\\"q\\""}}' },
    { created_at: 0, action: 'login.failed', actor: 'ünïcødé "quoted" \u2028', ip: '', base_id: null, target: '', detail: '{}' },
  ];

  it.each(rows)('are sha256 of canonicalJson of the fields (%#)', (fields) => {
    expect(fieldsDigest(fields)).toBe(sha(canonicalJson(fields)));
    const prev = 'a'.repeat(64);
    expect(rowHash(prev, { seq: 42, ...fields })).toBe(sha(prev + canonicalJson({ seq: 42, ...fields })));
  });

  it('change with any field', () => {
    const fields = rows[0]!;
    const hashes = new Set(Object.keys(fields).map((key) => rowHash('0', { seq: 1, ...fields, [key]: key === 'base_id' || key === 'created_at' ? 8 : 'other' })));
    hashes.add(rowHash('0', { seq: 2, ...fields }));
    hashes.add(rowHash('1', { seq: 1, ...fields }));
    expect(hashes.size).toBe(Object.keys(fields).length + 2);
  });
});
