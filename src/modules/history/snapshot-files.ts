import { PassThrough, type Readable } from 'node:stream';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { safeAssetPath, type KeptFile } from '../assets/index.js';

/**
 * Which files of the base a snapshot's rows reference: every `/asset/<base uuid>/<path>` URL in any cell
 * (file and image cells, images in long text), by path (a copied or imported base's cells still name
 * the uuid of the base they came from; its files are at the same paths in its own folder).
 */
export async function referencedPaths(archive: Buffer): Promise<string[]> {
  const paths = new Set<string>();
  const zip = await fromBuffer(archive);
  try {
    for await (const entry of entries(zip)) {
      if (entry.fileName !== 'rows.jsonl') continue;
      const stream = await openEntry(zip, entry);
      let rest = '';
      for await (const chunk of stream) {
        const text = rest + (chunk as Buffer).toString('utf8');
        const cut = text.lastIndexOf('\n');
        collectAssetPaths(text.slice(0, cut + 1), paths);
        rest = text.slice(cut + 1);
      }
      collectAssetPaths(rest, paths);
    }
  } finally {
    zip.close();
  }
  return [...paths];
}

const ASSET_URL = /\/asset\/[0-9A-Za-z-]{32,36}\/([^"\\?#\s]+)/g;

/** A link in Markdown (`![x](…/a.png)`, long text) ends at a `)` the path does not open. */
function withoutMarkdownParen(path: string): string {
  if (!path.endsWith(')')) return path;
  const opened = path.split('(').length - 1;
  const closed = path.split(')').length - 1;
  return closed > opened ? path.slice(0, -1) : path;
}

/** Adds the file path of every `/asset/<uuid>/<path>` URL in `text` (cells as JSON) to `into`. */
export function collectAssetPaths(text: string, into: Set<string>): void {
  for (const match of text.matchAll(ASSET_URL)) {
    let raw: string;
    try {
      raw = decodeURIComponent(withoutMarkdownParen(match[1]!));
    } catch {
      continue;
    }
    const checked = safeAssetPath(raw);
    if (checked) into.add(checked);
  }
}

/**
 * The snapshot as a base file: the stored archive's entries (structure, rows, links) and the kept
 * files as `assets/<path>`, streamed (files one at a time from their blobs).
 */
export function archiveWithFiles(archive: Buffer, files: KeptFile[], openBlob: (sha: string) => Promise<Readable | null>): Readable {
  const out = new PassThrough();
  const zip = new yazl.ZipFile();
  zip.outputStream.on('error', (e) => out.destroy(e)).pipe(out);
  void (async () => {
    const source = await fromBuffer(archive);
    try {
      for await (const entry of entries(source)) {
        if (entry.fileName.endsWith('/')) continue;
        const chunks: Buffer[] = [];
        for await (const chunk of await openEntry(source, entry)) chunks.push(chunk as Buffer);
        zip.addBuffer(Buffer.concat(chunks), entry.fileName);
      }
    } finally {
      source.close();
    }
    for (const file of files) {
      const blob = await openBlob(file.sha256);
      if (blob) zip.addReadStream(blob, `assets/${file.path}`, { size: file.size });
    }
    zip.end();
  })().catch((error: unknown) => out.destroy(error as Error));
  return out;
}

function fromBuffer(buffer: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => yauzl.fromBuffer(buffer, { lazyEntries: true, autoClose: false }, (error, zip) => (error || !zip ? reject(error) : resolve(zip))));
}

async function* entries(zip: yauzl.ZipFile): AsyncGenerator<yauzl.Entry> {
  for (;;) {
    const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
      const onEntry = (e: yauzl.Entry) => done(e);
      const onEnd = () => done(null);
      const onError = (e: Error) => {
        cleanup();
        reject(e);
      };
      const cleanup = () => {
        zip.off('entry', onEntry);
        zip.off('end', onEnd);
        zip.off('error', onError);
      };
      const done = (e: yauzl.Entry | null) => {
        cleanup();
        resolve(e);
      };
      zip.on('entry', onEntry);
      zip.on('end', onEnd);
      zip.on('error', onError);
      zip.readEntry();
    });
    if (!entry) return;
    yield entry;
  }
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error || !stream ? reject(error) : resolve(stream))));
}
