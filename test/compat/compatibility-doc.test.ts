import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** `shared/` sits beside the clone (the main tree) or beside the work trees; a clone elsewhere has only the list below. */
const SPEC_DIR = ['../shared/spec/openapi', '../../shared/spec/openapi'].map((p) => path.resolve(ROOT, p)).find((p) => existsSync(p));
/** The operations of those documents, kept in the repository so the check runs wherever the clone is. */
const KEPT_LIST = path.join(import.meta.dirname, 'original-operations.txt');
const keptOperations = () => readFileSync(KEPT_LIST, 'utf8').split('\n').filter((line) => line !== '' && !line.startsWith('#'));

/** `METHOD /path` of every operation in the original's OpenAPI documents (paths at 2, methods at 4 spaces). */
function specOperations(dir: string): string[] {
  const ops: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
    let current: string | null = null;
    for (const line of readFileSync(path.join(dir, file), 'utf8').split('\n')) {
      const p = /^ {2}(\/\S*):\s*$/.exec(line);
      if (p) current = p[1]!;
      const m = /^ {4}(get|post|put|delete|patch):\s*$/.exec(line);
      if (m && current) ops.push(`${m[1]!.toUpperCase()} ${current}`);
    }
  }
  return ops;
}

const shape = (op: string) => op.replace(/\{[^}]+\}/g, '{}').replace(/\/$/, '');

describe('docs/compatibility.md lists every endpoint of the original, in step with the routes', () => {
  let t: TestApp;
  let table: Map<string, string>;
  let served: Set<string>;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    const doc = t.app.swagger() as { paths: Record<string, Record<string, unknown>> };
    served = new Set(Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => shape(`${m.toUpperCase()} ${p}`))));
    table = new Map();
    for (const line of readFileSync(path.join(ROOT, 'docs/compatibility.md'), 'utf8').split('\n')) {
      const row = /^\| (GET|POST|PUT|DELETE|PATCH) \| `([^`]+)` \| [^|]+ \| (served|not served) \|/.exec(line);
      if (row) table.set(`${row[1]} ${row[2]}`, row[3]!);
    }
  });
  afterAll(() => t.close());

  it('keeps the list of the original operations in step with its OpenAPI documents', () => {
    const kept = keptOperations();
    expect(kept.length).toBeGreaterThan(250);
    // Where the documents are at hand (the main tree, the work trees), the kept list must be theirs.
    if (SPEC_DIR) expect(kept).toEqual(specOperations(SPEC_DIR));
  });

  it('has one row per operation, and nothing else', () => {
    const ops = keptOperations();
    expect([...table.keys()].sort()).toEqual([...new Set(ops)].sort());
  });

  it('says "served" exactly for the operations a route answers', () => {
    const wrong = [...table].filter(([op, status]) => (status === 'served') !== served.has(shape(op)));
    expect(wrong).toEqual([]);
  });
});
