import yauzl from 'yauzl';
import { badRequest } from '../../shared/errors.js';

export interface ZipLimits {
  /** All entries together, uncompressed. */
  maxUncompressedBytes: number;
  /** One entry's uncompressed size over its compressed size. */
  maxRatio: number;
  maxEntries: number;
}

/**
 * Refuses a zip (an XLSX) whose central directory declares more than the limits — a zip bomb —
 * before any of it is inflated. The reader later inflates at most what was declared (exceljs'
 * unzipper stops at the declared size), so the declaration bounds the work.
 */
export async function checkZip(file: string, limits: ZipLimits): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) =>
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (error, z) => (error || !z ? reject(badRequest('The file is not a valid XLSX file.')) : resolve(z))),
  );
  await new Promise<void>((resolve, reject) => {
    let total = 0;
    let entries = 0;
    const refuse = (message: string) => {
      zip.close();
      reject(badRequest(message));
    };
    zip.on('entry', (entry: yauzl.Entry) => {
      entries++;
      total += entry.uncompressedSize;
      const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, 1);
      if (entries > limits.maxEntries) return refuse('The XLSX file has too many parts.');
      if (total > limits.maxUncompressedBytes || ratio > limits.maxRatio) {
        return refuse(`The XLSX file unpacks to too much data (${entry.fileName}): it looks like a zip bomb.`);
      }
      zip.readEntry();
    });
    zip.on('end', () => resolve());
    zip.on('error', () => reject(badRequest('The file is not a valid XLSX file.')));
    zip.readEntry();
  });
}
