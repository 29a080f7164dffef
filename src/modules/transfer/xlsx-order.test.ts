import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { reorderedZip, WORKSHEETS_BEFORE_WORKBOOK, zipParts } from '../../../test/helpers/zip-fixtures.js';
import { putWorkbookFirst } from './xlsx-order.js';

async function twoSheets(): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  workbook.addWorksheet('A').addRows([['x'], ['a']]);
  workbook.addWorksheet('B').addRows([['y'], ['b']]);
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

function fileWith(bytes: Buffer): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'xlsx-order-')), 'upload');
  writeFileSync(file, bytes);
  return file;
}

describe('putWorkbookFirst', () => {
  it('stores the workbook parts before the worksheets, every part unchanged', async () => {
    const late = await reorderedZip(await twoSheets(), WORKSHEETS_BEFORE_WORKBOOK);
    const file = fileWith(late);
    expect(await putWorkbookFirst(file)).toBe(true);
    const after = await zipParts(readFileSync(file));
    const names = after.map((p) => p.name);
    expect(names.slice(0, 4)).toEqual(['[Content_Types].xml', '_rels/.rels', 'xl/_rels/workbook.xml.rels', 'xl/workbook.xml']);
    expect(names.indexOf('xl/workbook.xml')).toBeLessThan(names.indexOf('xl/worksheets/sheet1.xml'));
    const byName = (parts: Array<{ name: string; data: Buffer }>) => Object.fromEntries(parts.map((p) => [p.name, p.data.toString('base64')]));
    expect(byName(after)).toEqual(byName(await zipParts(late)));
    // Nothing is left beside it.
    expect(readdirSync(path.dirname(file))).toEqual(['upload']);
    // Once in order, it is left as it is.
    expect(await putWorkbookFirst(file)).toBe(false);
  });

  it('leaves a file in order as it is', async () => {
    const inOrder = await reorderedZip(await twoSheets(), ['[Content_Types].xml', 'xl/workbook.xml']);
    const file = fileWith(inOrder);
    expect(await putWorkbookFirst(file)).toBe(false);
    expect(readFileSync(file).equals(inOrder)).toBe(true);
  });

  it('refuses a part that does not inflate to its bytes with a 400, leaving the file and no copy', async () => {
    const late = await reorderedZip(await twoSheets(), WORKSHEETS_BEFORE_WORKBOOK);
    // Break the deflated bytes of the first worksheet (its local header, name and data follow the parts before it).
    const broken = Buffer.from(late);
    const at = broken.indexOf('xl/worksheets/sheet1.xml') + 'xl/worksheets/sheet1.xml'.length;
    for (let i = at + 2; i < at + 40; i++) broken[i] = 0xff;
    const file = fileWith(broken);
    await expect(putWorkbookFirst(file)).rejects.toMatchObject({ statusCode: 400 });
    expect(readdirSync(path.dirname(file))).toEqual(['upload']);
    expect(readFileSync(file).equals(broken)).toBe(true);
  });
});
