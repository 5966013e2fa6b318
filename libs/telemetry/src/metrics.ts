import { Registry, collectDefaultMetrics } from 'prom-client';

/** Options for {@link createMetricsRegistry}. */
export interface MetricsRegistryOptions {
  /** prefix of the default process metrics, e.g. `shadowplane_sidecar_`; default `shadowplane_` */
  prefix?: string;
  /** collect Node process metrics (CPU, memory, event-loop lag, GC); default true */
  defaultMetrics?: boolean;
  /** labels added to every metric of this registry (keep them few and bounded) */
  labels?: Record<string, string>;
}

/**
 * A prom-client registry for one process (inject it into each feature's metrics class; never use
 * the global one). Metric names follow `shadowplane_<role>_<thing>_<unit>`.
 * Source: prom-client (https://github.com/siimon/prom-client#default-metrics).
 */
export function createMetricsRegistry(opts: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (opts.labels) registry.setDefaultLabels(opts.labels);
  if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: opts.prefix ?? 'shadowplane_' });
  return registry;
}

export { Registry };
