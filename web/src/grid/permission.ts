import type { BaseAccess } from './base';

/**
 * What the holder of a Base-Token may do, read from the token's own `permission` claim (the server
 * signs it: `rw`, `r`, or `base-external-link`), so the console shows only the controls that will work.
 * The server still checks every request; this only spares the user edits that would fail.
 */
export function canEditBase(access: BaseAccess): boolean {
  return tokenPermission(access.access_token) === 'rw';
}

export function tokenPermission(jwt: string): string | undefined {
  const payload = jwt.split('.')[1];
  if (!payload) return undefined;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(json) as { permission?: unknown };
    return typeof claims.permission === 'string' ? claims.permission : undefined;
  } catch {
    return undefined;
  }
}
