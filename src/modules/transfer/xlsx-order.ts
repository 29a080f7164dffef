import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { badRequest } from '../../shared/errors.js';

/**
 * The parts exceljs' streaming reader must have read before a worksheet's: the workbook (sheet names and
 * ids) and its relationships. A zip may hold its parts in any order; the reader reads them in the order
 * they are stored and fails on a worksheet stored before `xl/workbook.xml` once it has the shared strings
 * and the relationships (a TypeError of its own, reading the workbook's `sheets`). exceljs' own writer
 * stores the workbook after the worksheets now and then (the order its parts finish in).
 */
const FIRST_PARTS = ['[Content_Types].xml', '_rels/.rels', 'xl/_rels/workbook.xml.rels', 'xl/workbook.xml', 'xl/sharedStrings.xml', 'xl/styles.xml'];
const WORKSHEET = /^xl\/worksheets\/sheet\d+\.xml$/;

/**
 * Stores `file`'s workbook parts before its worksheets when a worksheet comes first: the zip is written
 * again beside it in that order (each part inflated and deflated once; the zip guard has bounded their
 * sizes) and replaces it. A file in that order already is left as it is. Returns whether it was rewritten.
 */
export async function putWorkbookFirst(file: string): Promise<boolean> {
  const zip = await openZip(file);
  try {
    const entries = await readEntries(zip);
    // The order the parts are stored in, which the streaming reader follows.
    const stored = [...entries].sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader);
    const workbook = stored.findIndex((e) => e.fileName === 'xl/workbook.xml');
    const firstSheet = stored.findIndex((e) => WORKSHEET.test(e.fileName));
    if (workbook < 0 || firstSheet < 0 || workbook < firstSheet) return false;
    const rank = (name: string) => (FIRST_PARTS.includes(name) ? FIRST_PARTS.indexOf(name) : FIRST_PARTS.length);
    const ordered = stored.map((entry, at) => ({ entry, at })).sort((a, b) => rank(a.entry.fileName) - rank(b.entry.fileName) || a.at - b.at);
    await rewrite(zip, ordered.map((o) => o.entry), file);
    return true;
  } finally {
    zip.close();
  }
}

/** Writes `entries` in this order to a zip beside `file`, which then replaces it; nothing is left on a failure. */
async function rewrite(zip: yauzl.ZipFile, entries: yauzl.Entry[], file: string): Promise<void> {
  const target = `${file}.ordered`;
  const out = new yazl.ZipFile();
  const output = out.outputStream as Readable;
  const written = pipeline(output, createWriteStream(target));
  written.catch(() => undefined); // awaited below: a failure while parts are still being added is heard there
  try {
    for (const entry of entries) {
      if (entry.fileName.endsWith('/')) {
        out.addEmptyDirectory(entry.fileName);
        continue;
      }
      const part = await entryStream(zip, entry);
      // A part that does not inflate to its declared bytes ends the copy (yazl would wait for it). Kept
      // listening: yauzl's inner streams may each report the same failure.
      part.on('error', () => {
        if (!output.destroyed) output.destroy(badRequest('The file is not a valid XLSX file.'));
      });
      out.addReadStream(part, entry.fileName);
    }
    out.end();
    await written;
    await rename(target, file);
  } catch (error) {
    // Ends the copy (and closes its file) whatever stopped it.
    if (!output.destroyed) output.destroy();
    await written.catch(() => undefined);
    await rm(target, { force: true });
    throw error;
  }
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: false }, (error, zip) => (error || !zip ? reject(badRequest('The file is not a valid XLSX file.')) : resolve(zip))),
  );
}

function readEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', () => reject(badRequest('The file is not a valid XLSX file.')));
    zip.readEntry();
  });
}

/** An entry's inflated bytes (yauzl stops a part at its declared size, and fails on a wrong one). */
function entryStream(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> {
  return new Promise((resolve, reject) =>
    zip.openReadStream(entry, (error, stream) => (error || !stream ? reject(badRequest('The file is not a valid XLSX file.')) : resolve(stream))),
  );
}
