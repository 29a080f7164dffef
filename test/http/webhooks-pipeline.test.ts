import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, outboxStats } from '../../src/modules/events/index.js';
import { WebhookEventConsumer } from '../../src/modules/webhooks/index.js';
import { Dispatcher } from '../../src/modules/outbox/index.js';
import { DIALECTS, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { addRows, createRule, dispatch, inbox, modifiedRule, ruleBase, share, updateRow } from './notification-fixtures.js';
import { changeEvent, createWebhook, drain, emit, freshTarget, webhookApp } from './webhooks-support.js';

/** Issue 19: the change pipeline from the outbox to its subscribers. */
describe.each(DIALECTS)('change pipeline (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    ({ t, owner } = await webhookApp(dialect));
  });
  afterAll(() => t.close());

  const commit = (events: ReturnType<typeof changeEvent>[]) =>
    t.container.db.transaction().execute((trx) => appendEvents(trx, dialect, events, t.clock.now()));

  it('a webhook receives exactly the changes committed after its creation (dispatcher paused in between)', async () => {
    const { base, receiver } = await freshTarget(t, owner);
    try {
      const before = [changeEvent(base), changeEvent(base)];
      await commit(before); // committed, not yet handed to any consumer
      const hook = await createWebhook(t, owner, base, { url: receiver.url() });
      const after = changeEvent(base);
      await emit(t, [after]);
      await drain(t);
      expect(receiver.bodies().map((b) => b.data.row_id)).toEqual([after.rowId]);
      const queued = await t.container.db.selectFrom('webhook_deliveries').select('event_id').where('webhook_id', '=', hook.id).execute();
      expect(queued).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('a notification rule fires only for changes committed after its creation', async () => {
    const bob = await createUser(t, { name: 'Bob' });
    const base = await ruleBase(t, owner);
    await share(t, owner, base, bob, 'rw');
    const [rowId] = await addRows(t, base, [{ Name: 'a', Priority: 1 }]);
    await dispatch(t);
    await updateRow(t, base, rowId!, { Priority: 2 }); // committed before the rule exists
    await createRule(t, owner, base, modifiedRule(base, [bob.virtualId]));
    await dispatch(t);
    expect((await inbox(t, bob)).filter((n) => n.type === 'notification_rules')).toEqual([]);
    await updateRow(t, base, rowId!, { Priority: 3 });
    await dispatch(t);
    expect((await inbox(t, bob)).filter((n) => n.type === 'notification_rules')).toHaveLength(1);
  });

  it('wakes the delivery worker only after the queuing transaction committed', async () => {
    const { base, receiver } = await freshTarget(t, owner);
    try {
      await createWebhook(t, owner, base, { url: receiver.url() });
      await dispatch(t);
      let seenAtWake: Promise<number> | null = null;
      // A claim on another connection at the moment of the wake must find the delivery.
      const consumer = new WebhookEventConsumer(
        () => t.clock.now(),
        () => {
          seenAtWake = t.container.db
            .selectFrom('webhook_deliveries')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('base_id', '=', base.id)
            .where('status', '=', 'pending')
            .executeTakeFirstOrThrow()
            .then((r) => Number(r.n));
        },
      );
      const dispatcher = new Dispatcher(t.container.db, dialect, t.clock);
      dispatcher.register(consumer);
      await commit([changeEvent(base), changeEvent(base)]);
      await dispatcher.runOnce();
      expect(seenAtWake).not.toBeNull();
      expect(await seenAtWake!).toBe(2);
      expect(await drain(t)).toBe(2);
    } finally {
      await receiver.close();
    }
  });

  it('events of a base without webhooks or rules are acknowledged without being parsed', async () => {
    const { base: quiet, receiver } = await freshTarget(t, owner);
    try {
      await dispatch(t);
      const parsedBefore = outboxStats.parsed;
      await commit(Array.from({ length: 50 }, () => changeEvent(quiet)));
      await dispatch(t);
      expect(outboxStats.parsed).toBe(parsedBefore); // only ids and bases were read
      // (realtime-structure counts structure_events, a sequence of its own.)
      const positions = await t.container.db.selectFrom('event_consumers').select('last_event_id').where('name', '!=', 'realtime-structure').execute();
      const last = await t.container.db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow();
      expect(positions.every((p) => Number(p.last_event_id) === Number(last.id))).toBe(true);

      await createWebhook(t, owner, quiet, { url: receiver.url() });
      await emit(t, Array.from({ length: 3 }, () => changeEvent(quiet)));
      expect(outboxStats.parsed).toBe(parsedBefore + 3); // the webhook consumer's events; the rule consumer still skips them
      expect(await drain(t)).toBe(3);
    } finally {
      await receiver.close();
    }
  });
});
