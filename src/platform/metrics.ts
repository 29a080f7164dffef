import { Registry, collectDefaultMetrics } from 'prom-client';

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
