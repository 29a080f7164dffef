/** Keys whose values never enter the audit log, whatever their shape. */
const SECRET_KEY = /pass(word|wd)?|secret|token|api[_-]?key|authorization|cookie|credential|private[_-]?key|salt|otp|recovery|^code$/i;
/** Values that look like a credential even under an innocent key: API/Account-Tokens (40 hex), JWTs. */
const SECRET_VALUE = /^(?:[0-9a-f]{40}|eyJ[\w-]{4,}\.[\w-]{4,}\.[\w-]*)$/;
export const REDACTED = '[redacted]';
const MAX_DEPTH = 8;
const MAX_STRING = 2000;

/** A copy of `value` with secrets replaced by `[redacted]` (by key name, and credential-shaped strings). */
export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return SECRET_VALUE.test(value) ? REDACTED : value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}…` : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) return value.slice(0, 100).map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_KEY.test(key) ? REDACTED : redact(item, depth + 1);
  }
  return out;
}

/**
 * canonicalJson(redact(value)) in one pass, without the redacted copy: an audited action's
 * `before`/`after` are written this way with every row (redact.test.ts checks it against the two).
 */
export function redactedJson(value: unknown, depth = 0): string {
  if (typeof value === 'string') return JSON.stringify(redact(value));
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (depth >= MAX_DEPTH) return JSON.stringify('[too deep]');
  if (Array.isArray(value)) {
    let out = '[';
    const n = Math.min(value.length, 100);
    for (let i = 0; i < n; i += 1) out += (i > 0 ? ',' : '') + redactedJson(value[i], depth + 1);
    return `${out}]`;
  }
  const keys = Object.keys(value).sort();
  let out = '{';
  for (const key of keys) {
    const item = (value as Record<string, unknown>)[key];
    const secret = SECRET_KEY.test(key);
    if (item === undefined && !secret) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${secret ? JSON.stringify(REDACTED) : redactedJson(item, depth + 1)}`;
  }
  return `${out}}`;
}
