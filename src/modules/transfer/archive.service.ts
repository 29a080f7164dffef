import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import yazl from 'yazl';
import type { Db } from '../../db/index.js';
import { badRequest } from '../../shared/errors.js';
import type { AccountUser } from '../accounts/index.js';
import type { AssetsService } from '../assets/index.js';
import type { BasesService } from '../workspaces/index.js';
import type { BaseListing } from '../access/index.js';
import { storedIdsOf, type BaseMetadata } from '../rows/index.js';
import * as repo from './archive.repository.js';
import { checkZip, type ZipLimits } from './zip-guard.js';
import { fromOriginalContent, isOriginalContent } from './original-dtable.js';

/** The archive's format marker; `content.json` carries it (docs/import-export.md#a-whole-base-as-a-file). */
export const ARCHIVE_FORMAT = 'basegate-dtable';
export const ARCHIVE_VERSION = 1;
const BATCH = 1000;

interface Content {
  format: string;
  version: number;
  name: string;
  metadata: unknown;
}

/**
 * A whole base as one zip (`.dtable`): `content.json` (name and structure), `rows.jsonl` and
 * `links.jsonl` (one stored row or link per line, as the database holds them), and optionally
 * `assets/<path>` (the base's files). Written and read as streams.
 */
export class ArchiveService {
  constructor(
    private readonly db: Db,
    private readonly bases: BasesService,
    private readonly assets: AssetsService,
    private readonly onReplaced: (baseId: number) => void,
    private readonly limits: { zip: ZipLimits; tmpDir: string },
  ) {}

  /** Streams the archive of `base` into `out`. */
  async export(base: BaseListing, includeAssets: boolean, out: Writable): Promise<void> {
    const metadata = await repo.readMetadata(this.db, base.id);
    if (metadata === undefined) throw badRequest('The base has no structure to export.');
    const zip = new yazl.ZipFile();
    const done = pipeline(zip.outputStream, out);
    const content: Content = { format: ARCHIVE_FORMAT, version: ARCHIVE_VERSION, name: base.name, metadata: JSON.parse(metadata) };
    zip.addBuffer(Buffer.from(JSON.stringify(content)), 'content.json');
    // Only the metadata's tables and link columns: a trashed table's rows and links stay stored but are not the base's now.
    const { tableIds, linkIds } = storedIdsOf(content.metadata as BaseMetadata);
    zip.addReadStream(Readable.from(jsonLines(repo.scanBaseRows(this.db, base.id, tableIds))), 'rows.jsonl');
    zip.addReadStream(Readable.from(jsonLines(repo.scanBaseLinks(this.db, base.id, linkIds))), 'links.jsonl');
    if (includeAssets) {
      const prefix = `${base.uuid}/`;
      for (const object of await this.assets.storage.list(prefix)) {
        const stream = await this.assets.storage.open(object.key);
        if (stream) zip.addReadStream(stream, `assets/${object.key.slice(prefix.length)}`, { size: object.size });
      }
    }
    zip.end();
    await done;
  }

  /**
   * A new base in `workspaceId` from an archive file (basegate's, or the original's `.dtable` with its
   * rows and links inside `content.json`, then named `name`); all or nothing. `rename` names the new
   * base instead of the archive's name (a snapshot restored beside its base).
   */
  async import(user: AccountUser, workspaceId: unknown, file: string, name = 'Imported', rename?: string): Promise<BaseListing> {
    await checkZip(file, this.limits.zip);
    const zip = await openZip(file);
    try {
      const entries = await listEntries(zip);
      const contentEntry = entries.get('content.json');
      if (!contentEntry) throw badRequest('The file is not a base archive: content.json is missing.');
      const parsed = await readContent(zip, contentEntry);
      const original = isOriginalContent(parsed) ? fromOriginalContent(parsed, name) : null;
      const content = original ?? checkContent(parsed);
      const base = await this.bases.create(user, { name: rename ?? content.name, workspaceId });
      try {
        await this.db.transaction().execute(async (trx) => {
          await repo.replaceContent(trx, base.id, JSON.stringify(content.metadata));
          if (original) {
            for (let i = 0; i < original.rows.length; i += BATCH) await repo.insertArchivedRows(trx, base.id, original.rows.slice(i, i + BATCH));
            for (let i = 0; i < original.links.length; i += BATCH) await repo.insertArchivedLinks(trx, base.id, original.links.slice(i, i + BATCH));
          }
          const rows = entries.get('rows.jsonl');
          if (rows) for await (const batch of batches<repo.ArchivedRow>(zip, rows)) await repo.insertArchivedRows(trx, base.id, batch.map(checkRow));
          const links = entries.get('links.jsonl');
          if (links) for await (const batch of batches<repo.ArchivedLink>(zip, links)) await repo.insertArchivedLinks(trx, base.id, batch.map(checkLink));
        });
        for (const [name, entry] of entries) {
          if (!name.startsWith('assets/') || name.endsWith('/')) continue;
          await this.importAsset(zip, entry, base.uuid, name.slice('assets/'.length));
        }
      } catch (error) {
        // All or nothing: the half-made base goes again (its files with it).
        await this.bases.delete(user, String(base.workspace_id), base.name).catch(() => undefined);
        throw error;
      }
      this.onReplaced(base.id);
      return base;
    } finally {
      zip.close();
    }
  }

  private async importAsset(zip: yauzl.ZipFile, entry: yauzl.Entry, baseUuid: string, assetPath: string): Promise<void> {
    await mkdir(this.limits.tmpDir, { recursive: true });
    const temp = path.join(this.limits.tmpDir, `archive-${randomUUID()}`);
    try {
      await pipeline(await openEntry(zip, entry), createWriteStream(temp));
      await this.assets.importFile(baseUuid, assetPath, temp);
    } finally {
      await rm(temp, { force: true });
    }
  }
}

async function* jsonLines<T>(pages: AsyncGenerator<T[]>): AsyncGenerator<string> {
  for await (const page of pages) yield page.map((item) => `${JSON.stringify(item)}\n`).join('');
}

function checkRow(r: repo.ArchivedRow): repo.ArchivedRow {
  const ok =
    typeof r.table_id === 'string' && typeof r.row_id === 'string' && typeof r.data === 'string' && typeof r.ctime === 'number' &&
    typeof r.mtime === 'number' && typeof r.creator === 'string' && typeof r.last_modifier === 'string';
  if (!ok) throw badRequest('The archive has a row that is not valid.');
  // Written again as JSON.stringify writes it, as every other row's text is: a text search looks for a term in
  // the row's whole text first (filters/to-sql.ts `rawInJson`), which an escape such as `\u0041` would hide.
  const data = JSON.stringify(JSON.parse(r.data));
  return { table_id: r.table_id, row_id: r.row_id, data, ctime: r.ctime, mtime: r.mtime, creator: r.creator, last_modifier: r.last_modifier };
}

function checkLink(l: repo.ArchivedLink): repo.ArchivedLink {
  if (typeof l.link_id !== 'string' || typeof l.row_id !== 'string' || typeof l.other_row_id !== 'string' || typeof l.ctime !== 'number') {
    throw badRequest('The archive has a link that is not valid.');
  }
  return { link_id: l.link_id, row_id: l.row_id, other_row_id: l.other_row_id, ctime: l.ctime };
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (error, zip) => (error || !zip ? reject(badRequest('The file is not a base archive.')) : resolve(zip))),
  );
}

function listEntries(zip: yauzl.ZipFile): Promise<Map<string, yauzl.Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, yauzl.Entry>();
    zip.on('entry', (entry: yauzl.Entry) => {
      entries.set(entry.fileName, entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', () => reject(badRequest('The file is not a base archive.')));
    zip.readEntry();
  });
}

function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) => zip.openReadStream(entry, (error, stream) => (error || !stream ? reject(badRequest('The archive is damaged.')) : resolve(stream))));
}

async function readContent(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<unknown> {
  if (entry.uncompressedSize > 16 * 1024 * 1024) throw badRequest('content.json is too large.');
  const chunks: Buffer[] = [];
  for await (const chunk of await openEntry(zip, entry)) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw badRequest('content.json is not valid JSON.');
  }
}

function checkContent(parsed: unknown): Content {
  const content = (parsed ?? {}) as Content;
  if (content.format !== ARCHIVE_FORMAT || content.version !== ARCHIVE_VERSION) throw badRequest(`The archive's format is not ${ARCHIVE_FORMAT} version ${ARCHIVE_VERSION}.`);
  if (typeof content.name !== 'string' || typeof content.metadata !== 'object' || content.metadata === null) throw badRequest('content.json is not valid.');
  return content;
}

async function* batches<T>(zip: yauzl.ZipFile, entry: yauzl.Entry): AsyncGenerator<T[]> {
  const lines = createInterface({ input: await openEntry(zip, entry), crlfDelay: Infinity });
  let batch: T[] = [];
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    try {
      batch.push(JSON.parse(line) as T);
    } catch {
      throw badRequest(`${entry.fileName} line ${n} is not valid JSON.`);
    }
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
