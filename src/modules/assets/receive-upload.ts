import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { apiError, type AppError } from '../../shared/errors.js';

/** The one file of an upload, already on disk in a temp file (the caller moves or removes it). */
export interface ReceivedFile {
  field: string;
  filename: string;
  tempFile: string;
  size: number;
  /** The first bytes, for content sniffing. */
  head: Buffer;
}

export interface ReceivedUpload {
  fields: Record<string, string>;
  file: ReceivedFile | null;
}

export interface ReceiveOptions {
  maxFileBytes: number;
  tmpDir: string;
  /** Bound of the whole receive; the request timeout also applies. */
  timeoutMs: number;
}

const HEAD_BYTES = 4100;
const MAX_FIELDS = 20;
const MAX_FIELD_BYTES = 64 * 1024;
const malformed = () => apiError(400, 'Request body is not valid multipart/form-data.');
const tooLarge = (limit: number) => apiError(413, `File is too large (the limit is ${limit} bytes).`);

/**
 * Reads a multipart body with at most one file, streaming the file to a temp file under `tmpDir`
 * (never holding it in memory) and refusing it past `maxFileBytes` (413). Fields may come before or
 * after the file (the Python client sends them first, the PHP client after). On any error the temp
 * file is removed and the rest of the body discarded.
 */
export async function receiveUpload(raw: IncomingMessage, options: ReceiveOptions): Promise<ReceivedUpload> {
  const contentType = raw.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(contentType)) throw apiError(400, 'Request body is not valid multipart/form-data.');
  await mkdir(options.tmpDir, { recursive: true });
  const fields: Record<string, string> = {};
  let file: ReceivedFile | null = null;
  let writing: Promise<void> | null = null;
  let tempFile: string | null = null;
  let output: WriteStream | null = null;

  const result = new Promise<ReceivedUpload>((resolve, reject) => {
    let settled = false;
    let busboy: BusboyInstance;
    const timer = setTimeout(() => fail(apiError(408, 'Upload timed out.')), options.timeoutMs);
    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      raw.unpipe();
      raw.resume();
      output?.destroy();
      reject(error);
    };
    try {
      busboy = new Busboy({
        headers: { 'content-type': contentType },
        preservePath: true, // the name is checked, not silently cut (asset-paths.ts)
        limits: { fileSize: options.maxFileBytes, files: 1, fields: MAX_FIELDS, parts: MAX_FIELDS + 1, fieldSize: MAX_FIELD_BYTES },
      });
    } catch {
      fail(malformed());
      return;
    }
    busboy
      .on('field', (name, value, _nameTruncated, valueTruncated) => {
        if (valueTruncated) return fail(apiError(400, `Field ${name} is too long.`));
        if (!Object.hasOwn(fields, name) && !(name in Object.prototype)) fields[name] = value;
      })
      .on('file', (field, stream, filename) => {
        const target = path.join(options.tmpDir, `upload-${randomUUID()}`);
        tempFile = target;
        const chunks: Buffer[] = [];
        let headSize = 0;
        let size = 0;
        const out = createWriteStream(target);
        output = out;
        stream.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (headSize < HEAD_BYTES) {
            chunks.push(chunk);
            headSize += chunk.length;
          }
        });
        stream.on('limit', () => fail(tooLarge(options.maxFileBytes)));
        writing = new Promise<void>((done, broken) => {
          out.on('finish', () => done());
          out.on('error', broken);
          stream.on('error', broken);
        });
        stream.pipe(out);
        file = { field, filename, tempFile: target, size: 0, head: Buffer.alloc(0) };
        writing.then(
          () => {
            if (file) Object.assign(file, { size, head: Buffer.concat(chunks).subarray(0, HEAD_BYTES) });
          },
          () => fail(malformed()),
        );
      })
      .on('filesLimit', () => fail(apiError(400, 'Only one file per upload.')))
      .on('fieldsLimit', () => fail(apiError(400, 'Too many fields.')))
      .on('partsLimit', () => fail(apiError(400, 'Too many fields.')))
      .on('error', () => fail(malformed()))
      .on('finish', () => {
        void Promise.resolve(writing)
          .then(() => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({ fields, file });
          })
          .catch(() => fail(malformed()));
      });
    raw.on('error', () => fail(malformed()));
    raw.on('close', () => {
      if (!raw.complete) fail(malformed());
    });
    raw.pipe(busboy);
  });
  try {
    return await result;
  } catch (error) {
    if (tempFile) await rm(tempFile, { force: true });
    throw error;
  }
}

/** Removes a received temp file (after a refusal that came once the body was read). */
export async function discardUpload(upload: ReceivedUpload): Promise<void> {
  if (upload.file) await rm(upload.file.tempFile, { force: true });
}
