import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMetadata, lockMetadata, metadataAsRead } from '../../src/modules/rows/metadata.repository.js';
import { DIALECTS, createBase, createTestApp, createUser, type TestApp, type TestBase } from '../helpers/index.js';

describe.each(DIALECTS)('metadata as read by a write (%s)', (dialect) => {
  let t: TestApp;
  let base: TestBase;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    base = await createBase(t, await createUser(t));
  });
  afterAll(() => t.close());

  it('gives the document as it was read, whatever was changed in it since', async () => {
    const stored = await loadMetadata(t.container.db, base.id);
    await t.container.db.transaction().execute(async (trx) => {
      const meta = await lockMetadata(trx, t.dialect, base.id);
      meta.tables[0]!.name = 'Renamed';
      meta.tables[0]!.columns.push({ ...meta.tables[0]!.columns[0]!, key: 'zzzz', name: 'Added' });
      meta.tables.push({ ...meta.tables[0]!, _id: 'tbl2', name: 'Second' });
      meta.version += 1;
      const before = metadataAsRead(meta);
      expect(before).toEqual(stored);
      expect(before).not.toBe(meta);
      // A fresh copy each time: a caller changing one does not change the next.
      before.tables[0]!.name = 'Changed copy';
      expect(metadataAsRead(meta).tables[0]!.name).toBe(stored.tables[0]!.name);
    });
  });

  it('refuses a document that was not read from the database', async () => {
    const copy = structuredClone(await loadMetadata(t.container.db, base.id));
    expect(() => metadataAsRead(copy)).toThrow(/not loaded/);
  });
});
