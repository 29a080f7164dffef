import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/shared/clock.js';
import { DIALECTS, SharedDatabase, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { listen } from '../helpers/raw-http.js';

type Page = { changes: Array<Record<string, unknown> & { cursor: string; type: string; op_type: string; row_name?: string }>; cursor: string; has_more: boolean };

describe.each(DIALECTS)('change feed (%s)', (dialect) => {
  let shared: SharedDatabase;
  let t: TestApp;
  let owner: TestUser;
  let base: TestBase;
  let token: string;
  const clock = new ManualClock();
  const gw = (path: string) => `/api-gateway/api/v2/dtables/${base.uuid}/${path}`;
  const open = async () => createTestApp(shared.dialect, {}, { database: await shared.open(), clock });
  const write = async (method: 'POST' | 'PUT' | 'DELETE', path: string, payload: Record<string, unknown>) => {
    const res = await t.request({ method, url: gw(path), token, payload });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<Record<string, unknown>>();
  };
  const insert = async (...names: string[]) =>
    ((await write('POST', 'rows/', { table_name: 'Table1', rows: names.map((Name) => ({ Name })) })).row_ids as Array<{ _id: string }>).map((r) => r._id);
  const feed = async (query: string) => {
    const res = await t.request({ method: 'GET', url: gw(`changes/?${query}`), token });
    return { status: res.statusCode, page: res.json<Page>() };
  };

  beforeAll(async () => {
    shared = new SharedDatabase(dialect);
    t = await open();
    owner = await createUser(t);
    base = await createBase(t, owner);
    token = await baseToken(t, owner, base);
  });
  afterAll(async () => {
    await t?.close();
    await shared?.dispose();
  });

  it('pages the changes in commit order with a cursor, filters like a webhook, and resumes exactly after a restart', async () => {
    const start = (await feed('after=now')).page.cursor;
    const ids = await insert('a', 'b', 'c');
    await write('POST', 'columns/', { table_name: 'Table1', column_name: 'Score', column_type: 'number' });
    await write('PUT', 'rows/', { table_name: 'Table1', updates: [{ row_id: ids[0], row: { Score: 5 } }] });
    await write('DELETE', 'rows/', { table_name: 'Table1', row_ids: [ids[1]] });

    const first = await feed(`after=${start}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.page.changes.map((c) => [c.op_type, c.row_name])).toEqual([['insert_row', 'a'], ['insert_row', 'b']]);
    expect(first.page.has_more).toBe(true);
    const rest = await feed(`after=${first.page.cursor}&limit=10`);
    // The structure change sits between the inserts and the update, as committed.
    expect(rest.page.changes.map((c) => `${c.type}:${c.op_type}`)).toEqual(['row:insert_row', 'structure:insert_column', 'row:modify_row', 'row:delete_row']);
    const modify = rest.page.changes[2]!;
    expect(modify.row_data).toEqual([expect.objectContaining({ column_name: 'Score', value: 5, old_value: null })]);
    expect((rest.page.changes[3]!.row_data as Array<{ old_value: unknown }>).map((c) => c.old_value)).toContain('b');
    expect(rest.page.has_more).toBe(false);
    // The same filters as webhooks, as query parameters.
    const filtered = await feed(`after=${start}&tables=Table1&events=modify_row,delete_row`);
    expect(filtered.page.changes.map((c) => c.op_type)).toEqual(['modify_row', 'delete_row']);
    const scored = await feed(`after=${start}&tables=Table1&filters=${encodeURIComponent(JSON.stringify([{ column_name: 'Score', filter_predicate: 'equal', filter_term: 5 }]))}`);
    expect(scored.page.changes.map((c) => c.op_type)).toEqual(['modify_row']);

    // A reader stops at a cursor; more changes come; the app restarts on the same database.
    const stoppedAt = rest.page.cursor;
    await insert('d', 'e');
    await t.close();
    t = await open();
    await insert('f');
    const resumed = await feed(`after=${stoppedAt}`);
    expect(resumed.page.changes.map((c) => c.row_name)).toEqual(['d', 'e', 'f']);
    expect((await feed(`after=${resumed.page.cursor}`)).page.changes).toEqual([]);
  });

  it('long-polls until a commit wakes it, and streams Server-Sent Events that resume from Last-Event-ID', async () => {
    const head = (await feed('after=now')).page.cursor;
    const waiting = feed(`after=${head}&wait=20`);
    await new Promise((r) => setTimeout(r, 150));
    await insert('woken');
    const woken = await waiting;
    expect(woken.page.changes.map((c) => c.row_name)).toEqual(['woken']);

    const server = await listen(t);
    const events: Array<{ id: string; data: Page['changes'][number] }> = [];
    const read = (lastEventId: string, until: number) =>
      new Promise<void>((resolve, reject) => {
        const req = http.get(`${server}${gw('changes/stream/')}?after=${head}`, { headers: { authorization: `Token ${token}`, 'last-event-id': lastEventId }, timeout: 10_000 }, (res) => {
          expect(res.headers['content-type']).toMatch(/text\/event-stream/);
          let buffer = '';
          res.on('data', (chunk: Buffer) => {
            buffer += chunk.toString('utf8');
            for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const id = /^id: (.*)$/m.exec(block)?.[1];
              const data = /^data: (.*)$/m.exec(block)?.[1];
              if (id && data) events.push({ id, data: JSON.parse(data) as Page['changes'][number] });
              if (events.length >= until) {
                req.destroy();
                resolve();
              }
            }
          });
        });
        req.on('error', (error) => (events.length >= until ? resolve() : reject(error)));
        req.on('timeout', () => req.destroy(new Error('stream timed out')));
      });
    const firstPart = read(head, 2);
    await insert('s1', 's2');
    await firstPart;
    expect(events.map((e) => e.data.row_name)).toEqual(['woken', 's1']);
    await insert('s3');
    // Reconnect with the id of the last event seen: nothing twice, nothing missed.
    await read(events[1]!.id, 4);
    expect(events.map((e) => e.data.row_name)).toEqual(['woken', 's1', 's2', 's3']);
    expect(events.map((e) => e.id)).toEqual(events.map((e) => e.data.cursor));
  });

  it('refuses bad input with a 400, needs a Base-Token, and answers 410 with the oldest cursor after the retention prune', async () => {
    for (const query of ['after=xyz', 'limit=0', 'limit=5000', 'wait=61', 'wait=-1', 'events=explode_row', 'tables=Nope', 'filters=%5Bnot']) {
      const res = await feed(query);
      expect(res.status, query).toBe(400);
      expect(res.page).toHaveProperty('error_msg');
    }
    expect((await t.request({ method: 'GET', url: gw('changes/') })).statusCode).toBeGreaterThanOrEqual(401);
    // The stream form checks the same input before it starts streaming (the fuzz leaves it out: it never ends).
    for (const query of ['after=xyz', 'limit=0', 'events=explode_row', 'filters=%5Bnot']) {
      const res = await t.request({ method: 'GET', url: gw(`changes/stream/?${query}`), token });
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toHaveProperty('error_msg');
    }
    expect((await t.request({ method: 'GET', url: gw('changes/stream/') })).statusCode).toBeGreaterThanOrEqual(401);

    const old = (await feed('after=now')).page.cursor;
    await insert('old');
    await t.container.dispatcher.runOnce();
    clock.advance(8 * 86_400_000);
    token = await baseToken(t, owner, base); // Base-Tokens last 3 days
    await insert('new');
    await t.container.dispatcher.runOnce();
    expect(await t.container.changeFeed.prune(clock.now())).toBeGreaterThan(0);
    const gone = await feed(`after=${old}`);
    expect(gone.status).toBe(410);
    const oldest = (gone.page as unknown as { oldest_cursor: string }).oldest_cursor;
    expect((await feed(`after=${oldest}`)).page.changes.map((c) => c.row_name)).toEqual(['new']);
    // A reader that kept up is not affected.
    expect((await feed('')).page.changes.map((c) => c.row_name)).toEqual(['new']);
  });
});
