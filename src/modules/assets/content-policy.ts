import { fileTypeFromBuffer } from 'file-type';

/** Raster images a browser may show inline. SVG is not here: it can carry script. */
const INLINE_IMAGES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/bmp',
  'image/avif',
  'image/x-icon',
  'image/vnd.microsoft.icon',
  'image/tiff',
]);

export interface ServedType {
  contentType: string;
  inline: boolean;
}

/**
 * The content type of stored bytes, sniffed from their first bytes (never the client's claim).
 * Only raster images are shown inline; everything else (HTML, SVG, unknown text) is a download
 * (`Content-Disposition: attachment`), so an upload can never run as the site.
 */
export async function servedType(head: Buffer): Promise<ServedType> {
  const sniffed = head.length > 0 ? await fileTypeFromBuffer(head) : undefined;
  const mime = sniffed?.mime ?? 'application/octet-stream';
  return { contentType: mime, inline: INLINE_IMAGES.has(mime) };
}

/** The headers of a served asset. */
export function assetHeaders(name: string, type: ServedType, size: number): Record<string, string> {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return {
    'content-type': type.contentType,
    'content-length': String(size),
    'content-disposition': `${type.inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'cache-control': 'private, max-age=300',
  };
}
