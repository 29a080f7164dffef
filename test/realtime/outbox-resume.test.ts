import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { appendRows, gateway, type Gateway } from '../http/rows.fixtures.js';
import { client, join, joined, listen, settle, waitFor, type LiveClient } from './live.support.js';

const WINDOW_S = 4;

/**
 * Issues 24.6 and 25.3 without Redis: the broadcasts kept for recovery are bounded per base, so a busy
 * base does not evict a quiet one's; a client whose last broadcast was evicted (as after a restart or on
 * another instance) is resumed from the outbox by the offset it sends; past the window it is told to
 * reload; an operation too large to send goes out as a small `dtable-changed`.
 */
describe.each(DIALECTS)('live channel: resume from the outbox (%s)', (dialect) => {
  let t: TestApp;
  let quiet: Gateway;
  let busy: Gateway;
  let url: string;
  const clients: LiveClient[] = [];
  const track = (c: LiveClient) => (clients.push(c), c);
  const names = (c: LiveClient) => (c.messages('update-dtable') as Array<{ row_data?: Record<string, unknown> }>).map((op) => op.row_data?.['0000']);

  beforeAll(async () => {
    t = await createTestApp(dialect, {
      REALTIME_RECOVERY_SECONDS: String(WINDOW_S),
      REALTIME_RECOVERY_BASE_MESSAGES: '5',
      REALTIME_MAX_OPERATION_BYTES: '2048',
    });
    url = await listen(t);
    t.container.dispatcher.start();
    quiet = await gateway(t);
    busy = await gateway(t, quiet.owner);
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  /** A client that joins again whenever it comes back without being recovered; its join answers. */
  const reconnecting = (g: Gateway) => {
    const c = track(client(url, g.base.uuid, { reconnection: true, reconnectionDelay: 300, reconnectionDelayMax: 300 }));
    const acks: object[] = [];
    c.socket.on('connect', () => {
      if (!c.socket.recovered) void join(c, g.base.uuid, g.token).then((ack) => acks.push(ack));
    });
    return { c, acks };
  };

  it('keeps a quiet base recoverable while a busy one passes its bound, and resumes the busy one from the outbox', async () => {
    const q = reconnecting(quiet);
    const b = reconnecting(busy);
    await waitFor(() => q.acks.length === 1 && b.acks.length === 1, 'both to join');
    await appendRows(quiet, 'Table1', [{ Name: 'q0' }]);
    await appendRows(busy, 'Table1', [{ Name: 'b0' }]);
    await waitFor(() => names(q.c).length === 1 && names(b.c).length === 1, 'a first change each');
    // Both connections drop; they come back once the writes below are made.
    for (const { c } of [q, b]) {
      c.socket.io.reconnection(false);
      c.socket.io.engine.close();
    }
    await waitFor(() => !q.c.socket.connected && !b.c.socket.connected, 'both to be away');
    await appendRows(quiet, 'Table1', [{ Name: 'q1' }]);
    // Twelve broadcasts to the busy base: more than the five it may keep, so its clients' offsets are evicted.
    for (let i = 1; i <= 12; i++) await appendRows(busy, 'Table1', [{ Name: `b${i}` }]);
    await settle(300); // (sent)
    q.c.socket.connect();
    b.c.socket.connect();
    await waitFor(() => names(q.c).length === 2 && names(b.c).length === 13, 'the missed changes', 10_000);
    expect(q.c.socket.recovered).toBe(true); // from memory: its base's broadcasts were kept
    expect(b.acks).toEqual([{ status: true }, { status: true }]); // joined again and resumed, not told to reload
    await appendRows(busy, 'Table1', [{ Name: 'live' }]);
    await waitFor(() => names(b.c).length === 14, 'a live change after the resume');
    await settle(200);
    expect(names(q.c)).toEqual(['q0', 'q1']);
    expect(names(b.c)).toEqual([...Array.from({ length: 13 }, (_, i) => `b${i}`), 'live']);
  });

  it('sends an operation larger than the bound as dtable-changed, and the small ones as before', async () => {
    const c = track(await joined(url, quiet.base.uuid, quiet.token));
    await appendRows(quiet, 'Table1', [{ Name: 'x'.repeat(5000) }]);
    await appendRows(quiet, 'Table1', [{ Name: 'small' }]);
    await waitFor(() => names(c).length === 1, 'the small change');
    const [changed] = c.messages('dtable-changed') as string[];
    expect(JSON.parse(changed!)).toMatchObject({ op_type: 'insert_row', reason: 'too-large' });
    expect(names(c)).toEqual(['small']);
  });

  it('tells a client whose offset is past the window to reload', async () => {
    const watcher = track(await joined(url, quiet.base.uuid, quiet.token));
    await appendRows(quiet, 'Table1', [{ Name: 'old' }]);
    await waitFor(() => names(watcher).includes('old'), 'the change to be sent');
    t.clock.advance(WINDOW_S * 1000 + 1000); // (the changes' times are the app's clock's)
    const c = track(client(url, quiet.base.uuid, { auth: { offset: 'v0.0.1' } }));
    expect(await join(c, quiet.base.uuid, quiet.token)).toEqual({ status: true, reload: true, dtable_version: Number.MAX_SAFE_INTEGER });
    expect(c.messages('update-dtable')).toEqual([]);
  });
});
