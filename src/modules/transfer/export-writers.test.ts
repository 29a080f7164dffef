import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ExportSource } from './export-rows.js';
import { writeCsv, writeXlsx } from './export-writers.js';

/**
 * Exports stream (issue 34.3): a writer pulls the next page of rows only when its output takes more, so a
 * client that stops reading holds the export at a few pages, never the table.
 */
const PAGE = 1000;

function endlessSource(pulled: { pages: number }): ExportSource {
  const columns = [
    { key: 'aaaa', name: 'Title', type: 'text' },
    { key: 'bbbb', name: 'Amount', type: 'number' },
  ] as ExportSource['columns'];
  return {
    table: { _id: 'tttt', name: 'T', columns, views: [] } as unknown as ExportSource['table'],
    view: undefined,
    columns,
    async *rows() {
      for (let page = 0; page < 10_000; page++) {
        pulled.pages++;
        yield Array.from({ length: PAGE }, (_, i) => [`row ${page * PAGE + i} ${'lorem ipsum '.repeat(8)}`, i]);
      }
    },
  };
}

/** An output whose reader stopped: it takes the first chunks and then never finishes a write. */
function stalledOutput(): { out: Writable; bytes: () => number } {
  let bytes = 0;
  let taken = 0;
  const out = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (++taken < 4) callback();
    },
  });
  out.on('error', () => undefined);
  return { out, bytes: () => bytes };
}

describe.each([
  ['CSV', writeCsv],
  ['XLSX', writeXlsx],
] as const)('%s export to a reader that stopped', (_name, write) => {
  it('pulls a few pages of rows, not the table', async () => {
    const pulled = { pages: 0 };
    const { out } = stalledOutput();
    void write(endlessSource(pulled), out).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    const held = pulled.pages;
    await new Promise((r) => setTimeout(r, 500));
    // Stopped: no page pulled meanwhile, and only a few pages (of the 10,000 available: what the streams' high-water marks hold) before it.
    expect(pulled.pages).toBe(held);
    expect(held).toBeGreaterThan(0);
    expect(held).toBeLessThanOrEqual(10);
    out.destroy();
  });
});
