import { context, propagation, trace } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { createRequire } from 'node:module';
import type { NodeSDK as NodeSDKType } from '@opentelemetry/sdk-node';
import { resourceFromAttributes } from '@opentelemetry/resources';

// The SDK (with every OTLP exporter it can pick) is several MB of modules: loaded only when
// tracing starts, so a role with tracing off (the default) starts without it. Synchronous
// require (the package is CommonJS) keeps startTracing synchronous.
const loadNodeSDK = (): typeof NodeSDKType =>
  (createRequire(import.meta.url)('@opentelemetry/sdk-node') as { NodeSDK: typeof NodeSDKType }).NodeSDK;

/** Options for {@link startTracing}. */
export interface TracingOptions {
  /** default `service.name` (e.g. `shadowplane-duplicator`); `OTEL_SERVICE_NAME` overrides it */
  serviceName: string;
  serviceVersion?: string;
  /** the role, recorded as resource attribute `shadowplane.role` */
  role?: string;
  /** environment to read; default process.env (the SDK itself always reads process.env) */
  env?: NodeJS.ProcessEnv;
}

/** What {@link startTracing} returns. */
export interface TracingHandle {
  /** true when spans are exported */
  readonly enabled: boolean;
  /** why tracing is off (`no_endpoint`, `sdk_disabled`, `traces_exporter_none`, `start_failed`), or null when on */
  readonly disabledReason: string | null;
  /** a tracer (the API's no-op one when disabled) */
  readonly tracer: Tracer;
  /** flushes pending spans and stops the SDK; never throws */
  shutdown(): Promise<void>;
}

/** Tracer name every Shadowplane span is created with (instrumentation scope). */
export const TRACER_NAME = 'shadowplane';

let active = false;

/**
 * True once {@link startTracing} has started exporting in this process. Cheap (a module flag):
 * hot paths test it to skip trace work entirely when tracing is off.
 */
export function tracingEnabled(): boolean {
  return active;
}

/** A tracer under {@link TRACER_NAME}: the global one (a no-op until tracing starts). */
export function getTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

const truthy = (v: string | undefined) => v !== undefined && v.trim().toLowerCase() === 'true';

/**
 * Starts OpenTelemetry tracing for this process through `@opentelemetry/sdk-node`, configured by
 * the standard variables, which the SDK reads itself:
 * - on only when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set
 *   (`SHADOWPLANE_OTLP_ENDPOINT`, a full traces URL, is accepted as the latter); off otherwise,
 *   and then nothing is registered: the API stays a no-op and hot paths check
 *   {@link tracingEnabled};
 * - `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turns it off with an endpoint set;
 * - `OTEL_EXPORTER_OTLP_PROTOCOL` / `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`: `http/protobuf`
 *   (default), `http/json` or `grpc`; `OTEL_TRACES_SAMPLER` (+ `_ARG`), `OTEL_SERVICE_NAME`,
 *   `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_PROPAGATORS`, `OTEL_BSP_*` as the spec says.
 * Only traces are exported: metrics are Prometheus (`/metrics`), logs JSON lines on stdio, so the
 * SDK's OTLP metric and log exporters are not started.
 * Telemetry never throws into the caller: a failed start returns a disabled handle.
 * Source: OpenTelemetry SDK environment variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
 */
export function startTracing(opts: TracingOptions): TracingHandle {
  const env = opts.env ?? process.env;
  const off = (reason: string): TracingHandle => ({
    enabled: false,
    disabledReason: reason,
    tracer: getTracer(),
    shutdown: async () => {},
  });
  if (truthy(env['OTEL_SDK_DISABLED'])) return off('sdk_disabled');
  if ((env['OTEL_TRACES_EXPORTER'] ?? '').split(',').some((s) => s.trim() === 'none'))
    return off('traces_exporter_none');
  const alias = env['SHADOWPLANE_OTLP_ENDPOINT'];
  if (alias && !env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
    // the SDK reads process.env only, so the alias is handed on there
    env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] = alias;
    if (env !== process.env) process.env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] = alias;
  }
  if (!env['OTEL_EXPORTER_OTLP_ENDPOINT'] && !env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) return off('no_endpoint');
  try {
    const NodeSDK = loadNodeSDK();
    const sdk = new NodeSDK({
      // ours first; the env detector (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) merges over it
      resource: resourceFromAttributes({
        'service.name': opts.serviceName,
        ...(opts.serviceVersion ? { 'service.version': opts.serviceVersion } : {}),
        ...(opts.role ? { 'shadowplane.role': opts.role } : {}),
      }),
      instrumentations: [],
      metricReaders: [],
      logRecordProcessors: [],
    });
    sdk.start();
    active = true;
    let stopped: Promise<void> | null = null;
    return {
      enabled: true,
      disabledReason: null,
      tracer: getTracer(),
      shutdown: () =>
        (stopped ??= sdk
          .shutdown()
          .catch(() => undefined)
          .finally(() => {
            active = false;
            // unregister the globals so a later start (tests, a restarted role) registers anew
            trace.disable();
            context.disable();
            propagation.disable();
          })),
    };
  } catch {
    return off('start_failed');
  }
}
