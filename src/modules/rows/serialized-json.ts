import { randomUUID } from 'node:crypto';

/** A JSON body serialized already (the whole-base read): sent as it is, not stringified again. */
export class SerializedJson {
  constructor(readonly text: string) {}
}

/**
 * A placeholder value: `spliceJson` serializes an object holding it and puts JSON text where it is.
 * Random per process, so no stored string can be mistaken for it.
 */
export const SPLICE = `\u0000splice:${randomUUID()}`;
const SPLICE_JSON = JSON.stringify(SPLICE);

/** `JSON.stringify(value)` with the one `SPLICE` in it replaced by `json` (JSON text, serialized before). */
export function spliceJson(value: unknown, json: string): string {
  const text = JSON.stringify(value);
  const at = text.indexOf(SPLICE_JSON);
  if (at < 0) throw new Error('spliceJson: no placeholder in the value');
  return text.slice(0, at) + json + text.slice(at + SPLICE_JSON.length);
}
