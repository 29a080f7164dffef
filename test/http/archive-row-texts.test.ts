import yauzl from 'yauzl';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createTestApp, type TestApp } from '../helpers/index.js';
import { multipart } from '../helpers/asset-fixtures.js';
import { addTable, appendRows, gateway, through, type Gateway } from './rows.fixtures.js';

/** Every entry of a zip, by name. */
function unzip(file: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(file, { lazyEntries: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      const entries = new Map<string, Buffer>();
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, async (e, stream) => {
          if (e || !stream) return reject(e);
          const chunks: Buffer[] = [];
          for await (const chunk of stream) chunks.push(chunk as Buffer);
          entries.set(entry.fileName, Buffer.concat(chunks));
          zip.readEntry();
        });
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

async function zipOf(entries: Map<string, Buffer>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, bytes] of entries) zip.addBuffer(bytes, name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** JSON text with every letter of its strings written as a `\uXXXX` escape (valid JSON, the same values). */
const escapeLetters = (json: string) => json.replace(/"((?:[^"\\]|\\.)*)"/g, (_all, inner: string) => `"${inner.replace(/[A-Za-z]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`);

/**
 * A base archive's rows are stored as JSON.stringify writes them, whatever escapes the file's row texts
 * use: a text search looks for its term in a row's whole stored text before it parses the cell
 * (filters/to-sql.ts `rawInJson`), so a row stored as `"\u0044une"` would not be found by "dune".
 */
describe.each(DIALECTS)('a base archive with escaped row texts (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    g = await gateway(t);
    await addTable(g, 'Books', [{ column_name: 'Title', column_type: 'text' }]);
    await appendRows(g, 'Books', [{ Title: 'Dune Messiah' }, { Title: 'Emma' }, { Title: 'Children of Dune' }]);
  }, 60_000);
  afterAll(() => t?.close());

  it('imports them so a contains filter finds every row it matches', async () => {
    const exported = await t.request({ method: 'GET', url: `/api/v2.1/workspace/${g.base.workspaceId}/synchronous-export/export-dtable/?dtable_name=${encodeURIComponent(g.base.name)}`, token: g.owner.token });
    expect(exported.statusCode).toBe(200);
    const entries = await unzip(exported.rawPayload);
    const lines = entries.get('rows.jsonl')!.toString().split('\n').filter(Boolean);
    const escaped = lines.map((line) => {
      const row = JSON.parse(line) as { data: string };
      return JSON.stringify({ ...row, data: escapeLetters(row.data) });
    });
    expect(escaped.join('\n')).toContain('\\\\u0044\\\\u0075\\\\u006e\\\\u0065'); // "Dune", escaped inside the row text
    entries.set('rows.jsonl', Buffer.from(`${escaped.join('\n')}\n`));
    const content = JSON.parse(entries.get('content.json')!.toString()) as { name: string };
    entries.set('content.json', Buffer.from(JSON.stringify({ ...content, name: `${content.name} escaped` })));
    const ws = (await t.request({ method: 'GET', url: '/api/v2.1/workspaces/', token: g.owner.token })).json().workspace_list[0].id as number;
    const body = multipart([{ name: 'dtable', value: await zipOf(entries), filename: 'escaped.dtable' }]);
    const res = await t.request({ method: 'POST', url: `/api/v2.1/workspace/${ws}/import-dtable/`, token: g.owner.token, ...body });
    expect(res.statusCode, res.body).toBe(200);
    const imported = { id: res.json().table.id as number, uuid: res.json().table.uuid as string, name: res.json().table.name as string, workspaceId: ws };
    const h = through(t, { owner: g.owner, base: imported, token: await baseToken(t, g.owner, imported) });
    const found = await h.call('POST', 'filtered-rows/?table_name=Books', { filters: [{ column_name: 'Title', filter_predicate: 'contains', filter_term: 'dune' }] });
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json<{ rows: Array<{ Title: string }> }>().rows.map((r) => r.Title)).toEqual(['Dune Messiah', 'Children of Dune']);
  });
});
