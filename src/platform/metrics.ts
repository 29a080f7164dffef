import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { redisConnections } from './redis.js';

/**
 * The app's Prometheus metrics. Modules register their counters on `registry` (one per container,
 * so test apps never collide on a metric name); process metrics (CPU, memory, event loop, GC) are
 * collected once per process and rendered beside them.
 */
export interface Metrics {
  registry: Registry;
  /** The text exposition of the process and app metrics. */
  render(): Promise<string>;
  readonly contentType: string;
}

let processRegistry: Registry | null = null;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
    new Gauge({
      name: 'basegate_redis_connected',
      help: 'Redis connections of this process by client: 1 connected, 0 away (each falls back while away; see docs/operations.md)',
      labelNames: ['client'],
      registers: [processRegistry],
      collect() {
        this.reset();
        // Several connections of one name (the adapter's reader and subscriber): 1 only when all are up.
        const up = new Map<string, boolean>();
        for (const { name, ready } of redisConnections()) up.set(name, (up.get(name) ?? true) && ready);
        for (const [name, ready] of up) this.set({ client: name }, ready ? 1 : 0);
      },
    });
    // Buffers (sockets, pg, HTTP bodies) live outside the V8 heap; the soak watches them apart.
    new Gauge({
      name: 'nodejs_array_buffers_bytes',
      help: 'Memory of ArrayBuffers and Buffers (process.memoryUsage().arrayBuffers), outside the V8 heap',
      registers: [processRegistry],
      collect() {
        this.set(process.memoryUsage().arrayBuffers);
      },
    });
  }
  return processRegistry;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  return {
    registry,
    contentType: registry.contentType,
    async render() {
      const [process, app] = await Promise.all([processMetrics().metrics(), registry.metrics()]);
      return `${process}\n${app}`;
    },
  };
}
