import yauzl from 'yauzl';
import yazl from 'yazl';

/** A zip's parts in the order they are stored, each with its bytes. */
export async function zipParts(zip: Buffer): Promise<Array<{ name: string; data: Buffer }>> {
  const file = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.fromBuffer(zip, { lazyEntries: true }, (e, z) => (e || !z ? reject(e) : resolve(z))));
  const entries: yauzl.Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    file.on('entry', (entry: yauzl.Entry) => {
      entries.push(entry);
      file.readEntry();
    });
    file.on('end', resolve);
    file.on('error', reject);
    file.readEntry();
  });
  entries.sort((a, b) => a.relativeOffsetOfLocalHeader - b.relativeOffsetOfLocalHeader);
  const parts: Array<{ name: string; data: Buffer }> = [];
  for (const entry of entries) {
    const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) => file.openReadStream(entry, (e, s) => (e || !s ? reject(e) : resolve(s))));
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    parts.push({ name: entry.fileName, data: Buffer.concat(chunks) });
  }
  file.close();
  return parts;
}

/** The same parts stored again, the names `first` (in that order) before the others (in theirs). */
export async function reorderedZip(zip: Buffer, first: string[]): Promise<Buffer> {
  const parts = await zipParts(zip);
  const rank = (name: string) => (first.includes(name) ? first.indexOf(name) : first.length);
  const out = new yazl.ZipFile();
  for (const part of parts.map((p, at) => ({ ...p, at })).sort((a, b) => rank(a.name) - rank(b.name) || a.at - b.at)) {
    if (part.name.endsWith('/')) out.addEmptyDirectory(part.name);
    else out.addBuffer(part.data, part.name);
  }
  out.end();
  const chunks: Buffer[] = [];
  for await (const chunk of out.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** What exceljs' streaming reader failed on: the shared strings and relationships, then the worksheets, the workbook last. */
export const WORKSHEETS_BEFORE_WORKBOOK = ['[Content_Types].xml', '_rels/.rels', 'xl/_rels/workbook.xml.rels', 'xl/sharedStrings.xml', 'xl/worksheets/sheet1.xml', 'xl/worksheets/sheet2.xml'];
