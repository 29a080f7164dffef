export type ParsedAuthorization =
  | { kind: 'token'; token: string }
  | { kind: 'missing' }
  | { kind: 'empty' }
  | { kind: 'spaces' };

/** Parse `Authorization: Token|Bearer <t>` (scheme in any case), as the original's DRF authentication. */
export function parseAuthorization(header: string | undefined): ParsedAuthorization {
  if (!header) return { kind: 'missing' };
  const parts = header.trim().split(/\s+/);
  const scheme = parts[0]?.toLowerCase();
  if (scheme !== 'token' && scheme !== 'bearer') return { kind: 'missing' };
  if (parts.length === 1) return { kind: 'empty' };
  if (parts.length > 2) return { kind: 'spaces' };
  return { kind: 'token', token: parts[1]! };
}

/** The token of an `Authorization` header, or null when absent or malformed. */
export function bearerToken(request: { headers: { authorization?: string | undefined } }): string | null {
  const parsed = parseAuthorization(request.headers.authorization);
  return parsed.kind === 'token' ? parsed.token : null;
}
