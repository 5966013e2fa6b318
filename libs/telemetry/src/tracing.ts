import { trace } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';

/** Options for {@link setupTracing}. */
export interface TracingOptions {
  serviceName: string;
  serviceVersion?: string;
  /** OTLP/HTTP traces URL, e.g. `http://127.0.0.1:4318/v1/traces`; tracing is off when absent */
  otlpEndpoint?: string;
}

/** What {@link setupTracing} returns. */
export interface TracingHandle {
  /** true when spans are exported */
  enabled: boolean;
  /** a tracer (a no-op one when disabled) */
  tracer: Tracer;
  /** flushes and stops the exporter; never throws */
  shutdown(): Promise<void>;
}

/**
 * Sets up OpenTelemetry tracing: off unless `otlpEndpoint` is given (then a NodeTracerProvider
 * with a batch OTLP/HTTP exporter is registered globally). Telemetry never throws into the
 * caller: a failed setup returns a disabled handle.
 * Source: OpenTelemetry JS SDK (https://opentelemetry.io/docs/languages/js/).
 */
export function setupTracing(opts: TracingOptions): TracingHandle {
  if (!opts.otlpEndpoint) {
    return { enabled: false, tracer: trace.getTracer(opts.serviceName), shutdown: async () => {} };
  }
  try {
    const provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': opts.serviceName, ...(opts.serviceVersion ? { 'service.version': opts.serviceVersion } : {}) }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: opts.otlpEndpoint }))],
    });
    provider.register();
    return {
      enabled: true,
      tracer: provider.getTracer(opts.serviceName, opts.serviceVersion),
      shutdown: async () => {
        try {
          await provider.shutdown();
        } catch {
          // telemetry never throws into the caller
        }
      },
    };
  } catch {
    return { enabled: false, tracer: trace.getTracer(opts.serviceName), shutdown: async () => {} };
  }
}
