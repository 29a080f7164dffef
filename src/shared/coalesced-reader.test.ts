import { describe, expect, it } from 'vitest';
import { CoalescedReader } from './coalesced-reader.js';

/** A fake store whose queries answer only when told to, reading the value at answer time. */
function controlledStore() {
  let value = 0;
  const pending: Array<() => void> = [];
  let sent = 0;
  const read = (key: string) =>
    new Promise<string>((resolve, reject) => {
      sent += 1;
      const sentValue = value; // a query sees what was committed when it was sent
      pending.push(() => (sentValue < 0 ? reject(new Error('boom')) : resolve(`${key}:${sentValue}`)));
    });
  return {
    read,
    set: (v: number) => void (value = v),
    answerNext: async () => {
      pending.shift()!();
      await new Promise((r) => setImmediate(r));
    },
    get sent() {
      return sent;
    },
  };
}

describe('CoalescedReader', () => {
  it('answers reads that arrive during a query with one later query, which sees what they must see', async () => {
    const store = controlledStore();
    const reader = new CoalescedReader(store.read);
    const first = reader.get('a');
    store.set(1); // committed after the first query was sent, before the others were asked
    const waiting = [reader.get('a'), reader.get('a'), reader.get('a')];
    expect(store.sent).toBe(1);
    await store.answerNext();
    expect(await first).toBe('a:0');
    expect(store.sent).toBe(2); // the next query went out as soon as the first returned
    await store.answerNext();
    expect(await Promise.all(waiting)).toEqual(['a:1', 'a:1', 'a:1']);
    expect(reader.inFlight).toBe(0);
  });

  it('keeps keys apart and sends anew once nothing is in flight', async () => {
    const store = controlledStore();
    const reader = new CoalescedReader(store.read);
    const a = reader.get('a');
    const b = reader.get('b');
    expect(store.sent).toBe(2);
    await store.answerNext();
    await store.answerNext();
    expect([await a, await b]).toEqual(['a:0', 'b:0']);
    store.set(2);
    const again = reader.get('a');
    expect(store.sent).toBe(3);
    await store.answerNext();
    expect(await again).toBe('a:2');
  });

  it('fails only the reads a failed query answers', async () => {
    const store = controlledStore();
    const reader = new CoalescedReader(store.read);
    store.set(-1);
    const failing = reader.get('a');
    const failingToo = reader.get('a').catch((e: Error) => e.message);
    const caught = failing.catch((e: Error) => e.message);
    await store.answerNext(); // the first query fails; the waiters' query is sent, still failing
    expect(await caught).toBe('boom');
    store.set(3);
    await store.answerNext();
    expect(await failingToo).toBe('boom'); // sent while the value was still bad
    const later = reader.get('a');
    await store.answerNext();
    expect(await later).toBe('a:3');
  });

  it('turns a read that throws at once into a rejection', async () => {
    const reader = new CoalescedReader<string, number>(() => {
      throw new Error('sync');
    });
    await expect(reader.get('a')).rejects.toThrow('sync');
    expect(reader.inFlight).toBe(0);
  });
});
