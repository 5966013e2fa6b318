// The one public surface of @shadowplane/telemetry: logging, metrics, tracing, GenAI names.
export { createLogger, REDACT_PATHS } from './logger.js';
export type { LoggerOptions, Logger } from './logger.js';
export { createMetricsRegistry, Registry } from './metrics.js';
export type { MetricsRegistryOptions } from './metrics.js';
export { setupTracing } from './tracing.js';
export type { TracingOptions, TracingHandle } from './tracing.js';
export { GENAI, genAiUsageAttributes } from './genai.js';
export type { GenAiAttribute } from './genai.js';
export { serveOps } from './ops.js';
export type { OpsServer, OpsServerOptions } from './ops.js';
