import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createTestApp, type TestApp, type TestBase } from '../helpers/index.js';
import { baseWithRoles, type RoleSet } from '../helpers/roles.js';
import { addTable, appendRows, through, uploadAsset, type Gateway } from './rows.fixtures.js';
import { ArchiveService } from '../../src/modules/transfer/index.js';
import { Snapshots } from '../../src/modules/history/snapshots.js';
import { FileBlobs } from '../../src/modules/assets/index.js';

const DAY = 86_400_000;
type Listed = { dtable_name: string; commit_id: string; ctime: string };

describe.each(DIALECTS)('snapshots (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let roles: RoleSet;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    const { owner, base, roles: r } = await baseWithRoles(t);
    roles = r;
    g = through(t, { owner, base, token: roles.tokens.owner });
  });
  afterAll(() => t.close());

  const snapshotsPath = (b: TestBase = g.base) => basePath(b, 'snapshots/');
  const list = async (token = g.owner.token, b: TestBase = g.base): Promise<Listed[]> => {
    const res = await t.request({ method: 'GET', url: snapshotsPath(b), token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().snapshot_list;
  };
  const rowsOf = async (gw: Gateway, table: string) =>
    ((await gw.call('GET', `rows/?table_name=${table}&convert_keys=true`)).json().rows as Array<Record<string, unknown>>).map(({ _id, Name, By }) => ({ _id, Name, By }));

  it('takes a snapshot on request and restores it into a new base equal to the base at that time (rows, links, structure)', async () => {
    await addTable(g, 'Authors', [{ column_name: 'Name', column_type: 'text' }]);
    await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'By', column_type: 'link', column_data: { table: 'Table1', other_table: 'Authors' } });
    const meta = (await g.call('GET', 'metadata/')).json().metadata;
    const linkId = meta.tables[0].columns.find((c: { name: string }) => c.name === 'By').data.link_id;
    const [dune] = await appendRows(g, 'Table1', [{ Name: 'Dune' }, { Name: 'Emma' }]);
    const [herbert] = await appendRows(g, 'Authors', [{ Name: 'Herbert' }]);
    await g.call('POST', 'links/', { link_id: linkId, table_name: 'Table1', other_table_name: 'Authors', other_rows_ids_map: { [dune!]: [herbert!] } });
    const before = { books: await rowsOf(g, 'Table1'), authors: await rowsOf(g, 'Authors'), tables: meta.tables.map((x: { name: string }) => x.name) };

    // Read-only users may not take one (write access); owners and writers may.
    expect((await g.call('POST', 'snapshot/', {}, roles.tokens.r)).statusCode).toBe(403);
    const taken = await g.call('POST', 'snapshot/', {});
    expect(taken.statusCode, taken.body).toBe(200);
    expect(taken.json()).toMatchObject({ status: 'created', snapshot: { dtable_uuid: g.base.uuid, dtable_name: `${g.base.name}.dtable`, commit_id: expect.stringMatching(/^[0-9a-f]{40}$/) } });
    const commitId = taken.json().snapshot.commit_id as string;
    // The original's preconditions: 10 minutes between, and a change since.
    expect((await g.call('POST', 'snapshot/', {})).statusCode).toBe(400);
    t.clock.advance(11 * 60_000);
    expect((await g.call('POST', 'snapshot/', {})).json().error_msg).toContain('not changed');

    // The base moves on after the snapshot.
    await g.call('DELETE', 'rows/', { table_name: 'Table1', row_ids: [dune] });
    await g.call('PUT', 'tables/', { table_name: 'Authors', new_table_name: 'Writers' });

    expect((await list()).map((s) => s.commit_id)).toEqual([commitId]);
    expect((await list(roles.users.r.token)).length).toBe(1);
    expect((await t.request({ method: 'GET', url: snapshotsPath(), token: roles.users.none.token })).statusCode).toBe(403);
    const download = await t.request({ method: 'GET', url: `${snapshotsPath()}${commitId}/download/`, token: g.owner.token });
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.subarray(0, 2).toString()).toBe('PK');

    // Restoring: owner and admins only; a new base, the old one unchanged.
    for (const role of ['rw', 'r'] as const) {
      expect((await t.request({ method: 'POST', url: `${snapshotsPath()}${commitId}/restore/`, token: roles.users[role].token, payload: {} })).statusCode).toBe(403);
    }
    const restored = await t.request({ method: 'POST', url: `${snapshotsPath()}${commitId}/restore/`, token: g.owner.token, payload: { snapshot_name: 'Back then' } });
    expect(restored.statusCode, restored.body).toBe(200);
    const dtable = restored.json().dtable;
    expect(dtable).toMatchObject({ name: 'Back then', workspace_id: g.base.workspaceId });
    const copy: TestBase = { id: dtable.id, uuid: dtable.uuid, name: dtable.name, workspaceId: dtable.workspace_id };
    const cg = through(t, { owner: g.owner, base: copy, token: await baseToken(t, g.owner, copy) });
    const copyMeta = (await cg.call('GET', 'metadata/')).json().metadata;
    expect(copyMeta.tables.map((x: { name: string }) => x.name)).toEqual(before.tables);
    expect(await rowsOf(cg, 'Table1')).toEqual(before.books);
    expect(await rowsOf(cg, 'Authors')).toEqual(before.authors);
    // An admin's restore goes to the admin's own workspace.
    const byAdmin = await t.request({ method: 'POST', url: `${snapshotsPath()}${commitId}/restore/`, token: roles.users.admin.token, payload: {} });
    expect(byAdmin.statusCode, byAdmin.body).toBe(200);
    expect(byAdmin.json().dtable.workspace_id).not.toBe(g.base.workspaceId);

    for (const [url, code] of [
      [`${snapshotsPath()}${'0'.repeat(40)}/download/`, 404],
      [`${snapshotsPath()}?per_page=0`, 400],
      [`${snapshotsPath()}?page=x`, 400],
    ] as const) {
      expect((await t.request({ method: 'GET', url, token: g.owner.token })).statusCode).toBe(code);
    }
    const badName = await t.request({ method: 'POST', url: `${snapshotsPath()}${commitId}/restore/`, token: g.owner.token, payload: { snapshot_name: 'x'.repeat(300) } });
    expect(badName.statusCode).toBe(400);
  });

  it('snapshots changed bases daily and keeps them by tiers (daily 30 days, weekly 6 months)', async () => {
    const snaps = t.container.history.snapshots;
    const count = async () => (await list()).length;
    const start = await count();
    // Unchanged since the last snapshot: the daily run skips the base.
    await snaps.daily();
    const afterFirst = await count();
    await snaps.daily();
    expect(await count()).toBe(afterFirst);
    expect(afterFirst).toBeGreaterThanOrEqual(start);
    // 200 days of a change every other day: the tiers keep all of the last 30 days and one a week before.
    for (let day = 0; day < 200; day += 2) {
      t.clock.advance(2 * DAY);
      // Base-Tokens last 3 days: a fresh one for each step.
      g = through(t, { owner: g.owner, base: g.base, token: await baseToken(t, g.owner, g.base) });
      await appendRows(g, 'Table1', [{ Name: `day ${day}` }]);
      await snaps.daily();
    }
    const all = await t.container.db.selectFrom('base_snapshots').select(['created_at']).where('base_id', '=', g.base.id).execute();
    const now = t.clock.now();
    const ages = all.map((s) => (now - Number(s.created_at)) / DAY);
    // Every one of the last 30 days (a change every other day: 16 with today's).
    expect(ages.filter((a) => a <= 30).length).toBe(16);
    expect(ages.every((a) => a < 184)).toBe(true);
    const weekly = ages.filter((a) => a > 30);
    // One per calendar week between 30 days and 6 months: about 22 weeks (of 3–4 snapshots each before pruning).
    expect(weekly.length).toBeGreaterThanOrEqual(20);
    expect(weekly.length).toBeLessThanOrEqual(24);
    const weeks = new Set(all.filter((s) => now - Number(s.created_at) > 30 * DAY).map((s) => Math.floor(Number(s.created_at) / (7 * DAY))));
    expect(weeks.size).toBe(weekly.length);
  });
  it('takes a snapshot while the base is written to: a write during the read makes it read again, so it holds one revision', async () => {
    const c = t.container;
    const archives = new ArchiveService(c.db, c.bases, c.assets.service, () => undefined, { zip: { maxUncompressedBytes: 1e8, maxRatio: 200, maxEntries: 1000 }, tmpDir: c.config.assets.tmpDir });
    let reads = 0;
    g = through(t, { owner: g.owner, base: g.base, token: await baseToken(t, g.owner, g.base) });
    const snaps = new Snapshots({
      db: c.db,
      clock: t.clock,
      baseById: (id) => c.access.findById(id),
      blobs: new FileBlobs(c.assets.storage, c.config.assets.tmpDir),
      tmpDir: c.config.assets.tmpDir,
      maxBytes: 1e8,
      archives: {
        // The first read is overtaken by a write (as a writer would, between two pages).
        export: async (base, out) => {
          reads++;
          if (reads === 1) await appendRows(g, 'Table1', [{ Name: 'written meanwhile' }]);
          await archives.export(base, false, out);
        },
        import: () => Promise.reject(new Error('not used')),
      },
    });
    await appendRows(g, 'Table1', [{ Name: 'before' }]);
    const base = (await c.access.findById(g.base.id))!;
    const taken = await snaps.take(base);
    expect(reads).toBe(2);
    const revision = Number((await c.db.selectFrom('base_metadata').select('revision').where('base_id', '=', g.base.id).executeTakeFirstOrThrow()).revision);
    expect(taken!.revision).toBe(revision);
    const stored = await c.db.selectFrom('base_snapshots').select('archive').where('commit_id', '=', taken!.commit_id).executeTakeFirstOrThrow();
    // The archive is a zip whose rows (deflated) are not readable as text: restore it to check instead.
    expect(Buffer.from(stored.archive).subarray(0, 2).toString()).toBe('PK');
    // A base that does not settle: 503 after the tries, nothing stored.
    const restless = new Snapshots({ db: c.db, clock: t.clock, baseById: (id) => c.access.findById(id), blobs: new FileBlobs(c.assets.storage, c.config.assets.tmpDir), tmpDir: c.config.assets.tmpDir, maxBytes: 1e8, archives: { export: async (b, out) => { await appendRows(g, 'Table1', [{ Name: 'again' }]); await archives.export(b, false, out); }, import: () => Promise.reject(new Error('not used')) } });
    const before = await c.db.selectFrom('base_snapshots').select('id').execute();
    await appendRows(g, 'Table1', [{ Name: 'a change since the last snapshot' }]);
    await expect(restless.take(base)).rejects.toMatchObject({ statusCode: 503 });
    expect((await c.db.selectFrom('base_snapshots').select('id').execute()).length).toBe(before.length);
  });
  it('keeps the files the rows reference as content-addressed blobs: stored once, downloaded with the snapshot, restored into the new base', async () => {
    const c = t.container;
    g = through(t, { owner: g.owner, base: g.base, token: await baseToken(t, g.owner, g.base) });
    const upload = (name: string, bytes: string) => uploadAsset(t, g, name, bytes);
    const kept = await upload('kept.txt', 'bytes of a kept file');
    await upload('unreferenced.txt', 'no row names me');
    await g.call('POST', 'columns/', { table_name: 'Table1', column_name: 'Doc', column_type: 'file' });
    const url = `http://basegate.test/workspace/${g.base.workspaceId}/asset/${g.base.uuid}/${kept}`;
    await appendRows(g, 'Table1', [{ Name: 'with a file', Doc: [{ name: 'kept.txt', size: 20, type: 'file', url }] }]);
    t.clock.advance(11 * 60_000);
    const first = await g.call('POST', 'snapshot/', {});
    expect(first.statusCode, first.body).toBe(200);
    const blobs = async () => (await c.db.selectFrom('snapshot_blobs').select(['sha256']).execute()).map((b) => b.sha256);
    const filesOf = async (commit: string) =>
      c.db.selectFrom('snapshot_files').innerJoin('base_snapshots', 'base_snapshots.id', 'snapshot_files.snapshot_id').select(['path', 'sha256']).where('commit_id', '=', commit).execute();
    expect((await filesOf(first.json().snapshot.commit_id)).map((f) => f.path)).toEqual([kept]);
    expect(await blobs()).toHaveLength(1);
    // A second snapshot of the changed base: the unchanged file is not stored again.
    await appendRows(g, 'Table1', [{ Name: 'another row' }]);
    t.clock.advance(11 * 60_000);
    const second = await g.call('POST', 'snapshot/', {});
    expect(second.statusCode, second.body).toBe(200);
    expect(await filesOf(second.json().snapshot.commit_id)).toEqual(await filesOf(first.json().snapshot.commit_id));
    expect(await blobs()).toHaveLength(1);
    // The file changes in the base: the snapshot keeps the bytes it had.
    await c.assets.storage.delete(`${g.base.uuid}/${kept}`);
    const download = await t.request({ method: 'GET', url: `${snapshotsPath()}${first.json().snapshot.commit_id}/download/`, token: g.owner.token });
    expect(download.statusCode).toBe(200);
    expect(download.rawPayload.includes(Buffer.from(`assets/${kept}`))).toBe(true);
    expect(download.rawPayload.includes(Buffer.from('assets/files/'))).toBe(true);
    const restored = await t.request({ method: 'POST', url: `${snapshotsPath()}${first.json().snapshot.commit_id}/restore/`, token: g.owner.token, payload: { snapshot_name: 'With files' } });
    expect(restored.statusCode, restored.body).toBe(200);
    const copyUuid = restored.json().dtable.uuid as string;
    const stream = await c.assets.storage.open(`${copyUuid}/${kept}`);
    expect(stream).not.toBeNull();
    const chunks: Buffer[] = [];
    for await (const chunk of stream!) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('bytes of a kept file');
    expect(await c.assets.storage.stat(`${copyUuid}/files`)).toBeNull();
    expect((await c.assets.storage.list(`${copyUuid}/`)).map((o) => o.key)).toEqual([`${copyUuid}/${kept}`]);
    // Snapshots gone: their blobs are collected (after a day's grace).
    await c.db.deleteFrom('base_snapshots').where('base_id', '=', g.base.id).execute();
    t.clock.advance(2 * DAY);
    expect(await c.history.snapshots.collectBlobs()).toBe(1);
    expect(await blobs()).toEqual([]);
  });
});
