// The one public surface of @shadowplane/telemetry: logging, metrics, tracing, GenAI names.
export { createLogger, REDACT_PATHS } from './logger.js';
export type { LoggerOptions, Logger } from './logger.js';
export { createMetricsRegistry, Registry } from './metrics.js';
export type { MetricsRegistryOptions } from './metrics.js';
export { BoundedLabel } from './bounded-label.js';
export { startTracing, tracingEnabled, getTracer, TRACER_NAME } from './tracing.js';
export type { TracingOptions, TracingHandle } from './tracing.js';
export {
  inSpan,
  recordError,
  linkFromTraceContext,
  contextFromHeaders,
  traceContextOf,
  TRACEPARENT_RE,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
} from './spans.js';
export type { TraceContextCarrier, Span, Link, Attributes } from './spans.js';
export { GENAI, genAiUsageAttributes, genAiProviderName, startGenAiSpan, endGenAiSpan } from './genai.js';
export type { GenAiAttribute, GenAiCallStart, GenAiCallResult, UsageLike } from './genai.js';
export { serveOps } from './ops.js';
export type { OpsServer, OpsServerOptions } from './ops.js';
