import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { appendRows, gateway, type Gateway } from '../http/rows.fixtures.js';
import { SOCKET_PATH, client, disconnected, join, joined, listen, settle, waitFor, type LiveClient } from './live.support.js';

describe.each(DIALECTS)('live channel: limits and catch-up (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let url: string;
  const clients: LiveClient[] = [];
  const track = (c: LiveClient) => (clients.push(c), c);
  const serverSockets = () => t.container.realtime.io.of('/').sockets.size;

  beforeAll(async () => {
    t = await createTestApp(dialect, { REALTIME_MAX_CONNECTIONS_PER_USER: '2', REALTIME_MAX_CONNECTIONS_PER_IP: '4', REALTIME_MAX_BUFFERED_PACKETS: '10' });
    url = await listen(t);
    t.container.dispatcher.start();
    g = await gateway(t);
  });
  afterAll(async () => {
    clients.forEach((c) => c.close());
    await t.close();
  });

  it('caps the sockets one credential may join with, and frees the slot on disconnect', async () => {
    const first = track(await joined(url, g.base.uuid, g.token));
    track(await joined(url, g.base.uuid, g.token));
    const third = track(client(url, g.base.uuid));
    expect(await join(third, g.base.uuid, g.token)).toEqual({ status: false, error_msg: 'Too many connections.' });
    await disconnected(third);
    first.close();
    await waitFor(() => serverSockets() === 1, 'the closed socket to be gone');
    track(await joined(url, g.base.uuid, g.token));
  });

  it('caps the connections from one address', async () => {
    // Two joined sockets remain from the test before; two more fit under the cap of four.
    const more = [track(client(url, g.base.uuid)), track(client(url, g.base.uuid))];
    await waitFor(() => more.every((c) => c.socket.connected), 'two more connections');
    const refused = track(client(url, g.base.uuid));
    expect(await disconnected(refused)).toBe('io server disconnect');
    expect(refused.messages('error')).toEqual([{ error_msg: 'Too many connections.' }]);
    more.forEach((c) => c.close());
    await waitFor(() => serverSockets() === 2, 'the extra connections to close');
  });

  it('drops a client that stops reading instead of buffering without end', async () => {
    clients.splice(0).forEach((c) => c.close());
    await waitFor(() => serverSockets() === 0, 'a clean start');
    const healthy = track(await joined(url, g.base.uuid, g.token));
    // A polling client that joins and then never polls again: its packets pile up on the server.
    const base = `${url}${SOCKET_PATH}/?EIO=4&transport=polling`;
    const open = await (await fetch(base)).text();
    const sid = (JSON.parse(open.slice(1)) as { sid: string }).sid;
    const send = (packet: string) => fetch(`${base}&sid=${sid}`, { method: 'POST', body: packet, headers: { 'content-type': 'text/plain' } });
    expect((await send('40')).status).toBe(200);
    await waitFor(() => serverSockets() === 2, 'the stalled client to connect');
    expect((await send(JSON.stringify(['join-room', g.base.uuid, g.token]).replace(/^/, '42'))).status).toBe(200);
    await waitFor(() => (t.container.realtime.io.of('/').adapter.rooms.get(`base:${g.base.uuid}`)?.size ?? 0) === 2, 'the stalled client to join');
    // Fifteen writes, fifteen messages (a batch would be one).
    for (let i = 0; i < 15; i++) await appendRows(g, 'Table1', [{ Name: `row ${i}` }]);
    await waitFor(() => serverSockets() === 1, 'the stalled client to be dropped', 8000);
    await waitFor(() => healthy.messages('update-dtable').length === 15, 'the healthy client to get every change');
    expect(healthy.socket.connected).toBe(true);
  });

  it('lets a client that reconnects within the window resume without losing a change', async () => {
    const c = track(client(url, g.base.uuid, { reconnection: true, reconnectionDelay: 600, reconnectionDelayMax: 600 }));
    expect(await join(c, g.base.uuid, g.token)).toEqual({ status: true });
    // The client resumes from the last message it saw, so it has seen one.
    await appendRows(g, 'Table1', [{ Name: 'seen' }]);
    await waitFor(() => c.messages('update-dtable').length === 1, 'a first change');
    const before = 1;
    c.socket.io.engine.close(); // the connection drops; the client reconnects after 600 ms
    await appendRows(g, 'Table1', [{ Name: 'while away 1' }]);
    await appendRows(g, 'Table1', [{ Name: 'while away 2' }]);
    await waitFor(() => c.socket.connected && c.messages('update-dtable').length >= before + 2, 'the missed changes', 8000);
    expect(c.socket.recovered).toBe(true);
    await settle(200);
    const names = (c.messages('update-dtable') as Array<{ row_data: Record<string, unknown> }>).slice(before).map((op) => op.row_data['0000']);
    expect(names).toEqual(['while away 1', 'while away 2']);
    // Still in the room after recovery, without joining again.
    await appendRows(g, 'Table1', [{ Name: 'back' }]);
    await waitFor(() => c.messages('update-dtable').length === before + 3, 'a change after recovery');
  });
});
