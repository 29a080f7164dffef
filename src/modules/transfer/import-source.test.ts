import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSheets } from './import-source.js';

async function readAll(content: Buffer, checked = false): Promise<number> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'basegate-source-')), 'f.csv');
  writeFileSync(file, content);
  let rows = 0;
  for await (const sheet of openSheets(file, 'csv', 'f', { checked })) for await (const _ of sheet.rows) rows++;
  return rows;
}

describe('CSV source', () => {
  // Far past the read stream's 64 KB chunks, so the check runs chunk by chunk.
  const lines = Array.from({ length: 20_000 }, (_, i) => `row ${i}`);

  it('names the line of a byte that is not UTF-8, deep in a large file', async () => {
    const bad = Buffer.concat([Buffer.from(['Name', ...lines.slice(0, 12_344)].join('\n') + '\n'), Buffer.from([0x4d, 0xfc, 0x0a]), Buffer.from(lines.slice(12_345).join('\n'))]);
    await expect(readAll(bad)).rejects.toThrow(/not UTF-8 text \(line 12346\)/);
  });

  it('takes multi-byte characters cut by a chunk boundary, and reads the rows again unchecked', async () => {
    const text = ['Name', ...lines.map((l) => `${l} äöü€😀`)].join('\n');
    expect(await readAll(Buffer.from(text))).toBe(20_000);
    expect(await readAll(Buffer.from(text), true)).toBe(20_000);
  });
});
