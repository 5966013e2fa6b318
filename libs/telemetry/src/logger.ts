import { trace } from '@opentelemetry/api';
import { pino } from 'pino';
import { tracingEnabled } from './tracing.js';
import type { DestinationStream, Level, Logger } from 'pino';

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** role or library name, bound as `service` on every line */
  service: string;
  /** build/package version, bound as `version` */
  version: string;
  /** minimum level; default `info` (or `SHADOWPLANE_LOG_LEVEL` is for the caller to pass in) */
  level?: Level | 'silent';
  /** where lines go; default stdout. Tests pass an in-memory stream. */
  destination?: DestinationStream;
  /** extra paths to redact, in pino/fast-redact syntax */
  redact?: string[];
}

const SECRET_HEADERS = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api-key',
  'openai-api-key',
  'x-goog-api-key',
];
const SECRET_KEYS = [
  'apiKey',
  'api_key',
  'password',
  'secret',
  'token',
  'accessToken',
  'access_token',
  'encryptionKey',
];

/**
 * The paths every Shadowplane logger censors: secret headers wherever a `headers` object is
 * logged (top level, one level down, `req`/`res`), and secret-named keys at the top level and
 * one level down (`*.apiKey`). Censored values become `[REDACTED]`.
 */
export const REDACT_PATHS: readonly string[] = Object.freeze([
  ...SECRET_HEADERS.flatMap((h) => {
    const k = /^[A-Za-z_$][\w$]*$/.test(h) ? `.${h}` : `["${h}"]`;
    const top = k.startsWith('.') ? h : k;
    return [top, `*${k}`, `headers${k}`, `*.headers${k}`, `req.headers${k}`, `res.headers${k}`, `request.headers${k}`];
  }),
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`]),
]);

/**
 * Creates the process logger: pino, JSON lines, base bindings `service` and `version`, ISO
 * times, string levels (`"level":"info"`), errors under `err`, secrets redacted
 * ({@link REDACT_PATHS} plus `opts.redact`); while tracing is on, a line logged inside a span
 * carries `trace_id` and `span_id` (hex, W3C) so logs and traces join.
 * Log calls take the data object first and a short fixed message second; bodies are never logged.
 * Source: pino redaction (https://getpino.io/#/docs/redaction).
 */
export function createLogger(opts: LoggerOptions): Logger {
  const options = {
    level: opts.level ?? 'info',
    base: { service: opts.service, version: opts.version },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: [...REDACT_PATHS, ...(opts.redact ?? [])], censor: '[REDACTED]' },
    serializers: { err: pino.stdSerializers.err },
    // `"level":"info"`, not 30: log pipelines and people filter on the name
    formatters: { level: (label: string) => ({ level: label }) },
    mixin: traceFields,
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

export type { Logger };

/** `trace_id`/`span_id` of the active span while tracing is on; nothing otherwise (pino merges into the object, so a fresh one). */
function traceFields(): Record<string, string> {
  if (!tracingEnabled()) return {};
  const sc = trace.getActiveSpan()?.spanContext();
  return sc ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}
