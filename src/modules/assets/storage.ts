import type { Readable } from 'node:stream';

/** One stored object; `key` is `<base uuid>/<path inside the base>`. */
export interface StoredObject {
  key: string;
  size: number;
  /** Last change, milliseconds since the epoch. */
  modified: number;
}

/**
 * Where asset bytes live: the local disk (default) or an S3-compatible bucket. Keys are checked by
 * `asset-paths.ts` before they reach a storage; the local storage checks again that a key stays
 * under its root. Every method streams: no object is ever held whole in memory.
 */
export interface AssetStorage {
  /** Moves a finished temp file into place (replacing what is there). */
  putFile(key: string, tempFile: string, contentType: string): Promise<void>;
  /** The bytes of `key` (an inclusive byte range if given), or null when absent. */
  open(key: string, range?: { start: number; end: number }): Promise<Readable | null>;
  stat(key: string): Promise<StoredObject | null>;
  /** Every object whose key starts with `prefix` (a folder: ends with `/`). */
  list(prefix: string): Promise<StoredObject[]>;
  delete(key: string): Promise<void>;
  deletePrefix(prefix: string): Promise<void>;
  copyPrefix(from: string, to: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  close(): void;
}
