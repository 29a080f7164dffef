/** Read-only: an answer is shared by every caller that parses the same header. */
export type ParsedAuthorization =
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'missing' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'spaces' };

const MISSING: ParsedAuthorization = { kind: 'missing' };

/** The last header parsed and its answer: the rate limiter, the auth hooks and a route parse one request's header in turn. */
let lastHeader: string | undefined;
let lastParsed: ParsedAuthorization = MISSING;

/** Parse `Authorization: Token|Bearer <t>` (scheme in any case), as the original's DRF authentication. */
export function parseAuthorization(header: string | undefined): ParsedAuthorization {
  if (!header) return MISSING;
  // A pure function of the text: the same header (a string compare) has the same answer.
  if (header === lastHeader) return lastParsed;
  const parsed = parse(header);
  lastHeader = header;
  lastParsed = parsed;
  return parsed;
}

function parse(header: string): ParsedAuthorization {
  const parts = header.trim().split(/\s+/);
  const scheme = parts[0]?.toLowerCase();
  if (scheme !== 'token' && scheme !== 'bearer') return MISSING;
  if (parts.length === 1) return { kind: 'empty' };
  if (parts.length > 2) return { kind: 'spaces' };
  return { kind: 'token', token: parts[1]! };
}

/** The token of an `Authorization` header, or null when absent or malformed. */
export function bearerToken(request: { headers: { authorization?: string | undefined } }): string | null {
  const parsed = parseAuthorization(request.headers.authorization);
  return parsed.kind === 'token' ? parsed.token : null;
}
