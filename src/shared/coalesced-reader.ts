interface Flight<V> {
  /** Waiters that arrived after the current query was sent; served by the next one. */
  next: { promise: Promise<V>; resolve: (value: V) => void; reject: (error: unknown) => void } | null;
}

/**
 * Reads by key with at most one query in flight per key. A read that arrives while a query for its
 * key is already on its way waits for the next one, which is sent as soon as that query returns and
 * answers every read that arrived meanwhile. So every read is answered by a query sent after it
 * arrived (it sees everything committed before it was asked), while N concurrent reads of one key
 * cost about two queries instead of N.
 */
export class CoalescedReader<K, V> {
  private readonly flights = new Map<K, Flight<V>>();

  constructor(private readonly read: (key: K) => Promise<V>) {}

  get(key: K): Promise<V> {
    const flight = this.flights.get(key);
    if (!flight) return this.send(key);
    if (!flight.next) {
      let resolve!: (value: V) => void;
      let reject!: (error: unknown) => void;
      const promise = new Promise<V>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      flight.next = { promise, resolve, reject };
    }
    return flight.next.promise;
  }

  /** Keys with a query in flight (for tests). */
  get inFlight(): number {
    return this.flights.size;
  }

  private send(key: K): Promise<V> {
    const flight: Flight<V> = { next: null };
    this.flights.set(key, flight);
    let query: Promise<V>;
    try {
      query = this.read(key);
    } catch (error) {
      query = Promise.reject(error);
    }
    const landed = () => {
      const waiting = flight.next;
      if (waiting) this.send(key).then(waiting.resolve, waiting.reject);
      else this.flights.delete(key);
    };
    query.then(landed, landed);
    return query;
  }
}
