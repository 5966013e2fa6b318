import { pino } from 'pino';
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

const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'api-key', 'openai-api-key', 'x-goog-api-key'];
const SECRET_KEYS = ['apiKey', 'api_key', 'password', 'secret', 'token', 'accessToken', 'access_token', 'encryptionKey'];

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
 * times, errors under `err`, secrets redacted ({@link REDACT_PATHS} plus `opts.redact`).
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
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

export type { Logger };
