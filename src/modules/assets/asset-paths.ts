import { badRequest } from '../../shared/errors.js';

const MAX_DEPTH = 16;
const MAX_SEGMENT_BYTES = 255;

/**
 * One name inside a base's asset folder: not empty, not `.` or `..`, no slash, backslash or control
 * character, at most 255 bytes. Everything that becomes part of a storage key passes here, so no
 * input can leave the base's folder.
 */
export function isSafeSegment(segment: string): boolean {
  return (
    segment !== '' &&
    segment !== '.' &&
    segment !== '..' &&
    Buffer.byteLength(segment) <= MAX_SEGMENT_BYTES &&
    // eslint-disable-next-line no-control-regex
    !/[/\\\u0000-\u001f\u007f]/.test(segment)
  );
}

/** A file name from a client (an upload's name, a rename's new name). */
export function checkFileName(name: unknown, field = 'name'): string {
  if (typeof name !== 'string' || !isSafeSegment(name.trim()) || name.trim() !== name) throw badRequest(`${field} invalid.`);
  return name;
}

/**
 * A path inside a base's assets (`files/2024-01/a.txt`, `/files/2024-01/a.txt`, or with the
 * `/asset/<uuid>/` prefix the original's URLs carry) as its normalized segments joined by `/`.
 * An empty path (the folder itself) only when `allowRoot`.
 */
export function checkAssetPath(input: unknown, field: string, baseUuid: string, allowRoot = false): string {
  if (typeof input !== 'string') throw badRequest(`${field} invalid.`);
  let value = input.trim();
  for (const prefix of [`/asset/${baseUuid}`, `asset/${baseUuid}`]) {
    if (value === prefix || value.startsWith(`${prefix}/`)) value = value.slice(prefix.length);
  }
  const segments = value.split('/').filter((s) => s !== '');
  if (segments.length === 0 && allowRoot) return '';
  if (segments.length === 0 || segments.length > MAX_DEPTH || !segments.every(isSafeSegment)) throw badRequest(`${field} invalid.`);
  return segments.join('/');
}

/** The storage key of a path inside a base (the path checked by `checkAssetPath`). */
export function assetKey(baseUuid: string, assetPath: string): string {
  return assetPath === '' ? `${baseUuid}/` : `${baseUuid}/${assetPath}`;
}

/** `a.txt` → `a (1).txt`, the original's way to keep both files on a name clash. */
export function numberedName(name: string, n: number): string {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return `${name} (${n})`;
  return `${name.slice(0, dot)} (${n})${name.slice(dot)}`;
}

/** A path inside a base's assets as `checkAssetPath` accepts it (without the prefix), or null. */
export function safeAssetPath(input: string): string | null {
  const segments = input.split('/').filter((s) => s !== '');
  return segments.length > 0 && segments.length <= MAX_DEPTH && segments.every(isSafeSegment) ? segments.join('/') : null;
}
