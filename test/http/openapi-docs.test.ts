import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/index.js';
import { OPERATION_DOCS } from '../../src/plugins/operation-docs.js';

type Operation = { summary?: string; description?: string };

/** The API reference at /api/docs/ (issue #29): every operation says what it does. */
describe('API reference', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp('sqlite');
  });
  afterAll(() => t.close());

  const operations = () => {
    const doc = t.app.swagger() as { paths: Record<string, Record<string, Operation>> };
    return Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })));
  };

  it('gives every operation a summary and a description', () => {
    const list = operations();
    expect(list.length).toBeGreaterThan(150);
    const missing = list.filter(({ op }) => !op.summary?.trim() || !op.description?.trim()).map(({ key }) => key);
    expect(missing).toEqual([]);
  });

  it('names only routes that exist in its catalogue of texts', () => {
    const keys = new Set(operations().map((o) => o.key));
    expect(Object.keys(OPERATION_DOCS).filter((k) => !keys.has(k))).toEqual([]);
  });

  it('serves the texts in the document the viewer reads', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs/openapi.json' });
    expect(res.statusCode).toBe(200);
    const rows = res.json().paths['/api-gateway/api/v2/dtables/{base_uuid}/rows/'];
    expect(rows.get.summary).toBe('List rows');
    expect(rows.post.description).toMatch(/1,000 rows/);
  });
});
