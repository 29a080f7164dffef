import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consumerPosition } from '../../src/modules/events/index.js';
import { NATS_CONSUMER } from '../../src/modules/nats/index.js';
import { WEBHOOKS_CONSUMER } from '../../src/modules/webhooks/index.js';
import { DIALECTS, createTestApp, type TestApp } from '../helpers/index.js';
import { NatsProcess, deleteStream, streamMessages, uniqueStream } from '../helpers/nats.js';
import { addTable, appendRows, gateway, type Gateway } from './rows.fixtures.js';

/**
 * Issue 31.6: every committed change is published to NATS JetStream once, with `Nats-Msg-Id` = the
 * change's id, by an `outside` outbox consumer; NATS down fails that consumer alone (the others go
 * on), and after NATS is back every change is there exactly once. A private nats-server per file.
 */
let nats: NatsProcess;
beforeAll(async () => {
  nats = await NatsProcess.start();
});
afterAll(() => nats.stop());

async function metric(t: TestApp, name: string): Promise<number> {
  const res = await t.request({ method: 'GET', url: '/metrics' });
  const line = res.body.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  if (!line) throw new Error(`metric ${name} missing`);
  return Number(line.split(' ').pop());
}

/** Run the dispatcher until the NATS consumer has caught up (it rests after a failure: real time). */
async function publishAll(t: TestApp, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await t.container.dispatcher.runOnce();
    if ((await metric(t, 'basegate_nats_lag_events')) === 0) return;
    if (Date.now() > deadline) throw new Error('the NATS consumer did not catch up');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(DIALECTS)('change stream to NATS JetStream (%s)', (dialect) => {
  let t: TestApp;
  let g: Gateway;
  let stream: string;
  let prefix: string;

  beforeAll(async () => {
    ({ stream, prefix } = uniqueStream());
    t = await createTestApp(dialect, { EVENTS_NATS_URL: nats.url, EVENTS_NATS_STREAM: stream, EVENTS_NATS_SUBJECT_PREFIX: prefix, EVENTS_NATS_TIMEOUT_MS: '1000' });
    g = await gateway(t);
    await addTable(g, 'T', [{ column_name: 'Name', column_type: 'text' }]);
  });
  afterAll(async () => {
    await t.close();
    await deleteStream(nats.url, stream);
  });

  it('publishes each change once under <prefix>.<base>.<table>.<op> with Nats-Msg-Id = its id, and a repeat is de-duplicated', async () => {
    const [id] = await appendRows(g, 'T', [{ Name: 'first' }]);
    const modified = await g.call('PUT', 'rows/', { table_name: 'T', updates: [{ row_id: id, row: { Name: 'second' } }] });
    expect(modified.statusCode).toBe(200);
    expect(await metric(t, 'basegate_nats_lag_events')).toBeGreaterThanOrEqual(2);
    await publishAll(t);
    const messages = await streamMessages(nats.url, stream);
    const events = await t.container.db.selectFrom('events').select(['id', 'table_id', 'op_type']).orderBy('id').execute();
    expect(messages.map((m) => m.msgId)).toEqual(events.map((e) => String(e.id)));
    const tableId = events[0]!.table_id;
    expect(messages.map((m) => m.subject)).toEqual([`${prefix}.${g.base.uuid}.${tableId}.insert_row`, `${prefix}.${g.base.uuid}.${tableId}.modify_row`]);
    expect(messages[1]!.body).toMatchObject({ id: Number(events[1]!.id), dtable_uuid: g.base.uuid, row_id: id, op_type: 'modify_row', table_name: 'T' });
    expect(messages[1]!.body.row_data).toEqual([expect.objectContaining({ column_name: 'Name', value: 'second', old_value: 'first' })]);
    expect(await metric(t, 'basegate_nats_lag_seconds')).toBe(0);

    // A crash after the publish and before the position was stored: the batch goes again, the stream drops it.
    await t.container.db.updateTable('event_consumers').set({ last_event_id: 0 }).where('name', '=', NATS_CONSUMER).execute();
    await publishAll(t);
    expect(await streamMessages(nats.url, stream)).toHaveLength(2);
    expect(await metric(t, 'basegate_nats_published_total{result="duplicate"}')).toBe(2);
  });

  it('NATS down fails the NATS consumer alone; after a restart of NATS every change is there exactly once', async () => {
    const before = (await streamMessages(nats.url, stream)).length;
    await nats.kill();
    try {
      await appendRows(g, 'T', [{ Name: 'while down 1' }, { Name: 'while down 2' }]);
      const report = await t.container.dispatcher.runOnce();
      expect(report.failed.map((f) => f.consumer)).toEqual([NATS_CONSUMER]);
      // The other consumers went on: the webhooks' position is at the last event, the stream's is not.
      const last = Number((await t.container.db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow()).id);
      expect(await consumerPosition(t.container.db, WEBHOOKS_CONSUMER)).toBe(last);
      expect(await consumerPosition(t.container.db, NATS_CONSUMER)).toBeLessThan(last);
      expect(await metric(t, 'basegate_nats_lag_events')).toBe(2);
      expect(await metric(t, 'basegate_nats_publish_failures_total')).toBeGreaterThanOrEqual(1);
      // Resting after the failure: another run does not wait on NATS again.
      const again = await t.container.dispatcher.runOnce();
      expect(again.failed).toEqual([]);
    } finally {
      await nats.start();
    }
    await appendRows(g, 'T', [{ Name: 'after restart' }]);
    await publishAll(t);
    const messages = await streamMessages(nats.url, stream);
    expect(messages).toHaveLength(before + 3);
    const ids = messages.map((m) => m.msgId);
    expect(new Set(ids).size).toBe(ids.length);
    const events = await t.container.db.selectFrom('events').select('id').orderBy('id').execute();
    expect(ids).toEqual(events.map((e) => String(e.id)));
  });
});
