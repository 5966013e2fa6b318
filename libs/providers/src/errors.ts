import type { ErrorClass } from '@shadowplane/contracts';
import { headerValue } from './headers.js';
import type { ResponseMeta } from './headers.js';

/** Result of {@link classifyError}. */
export interface ErrorClassification {
  /** null when the response is not an error */
  errorClass: ErrorClass | null;
  /** seconds to wait before retrying, from `retry-after-ms` / `retry-after`; null when absent */
  retryAfterS: number | null;
  /** the provider's error message (from the body), or a short prefix of a non-JSON body; null if none */
  message: string | null;
  /** served-by echo of an error, when a routing provider names the upstream (OpenRouter `error.metadata.provider_name`); else null */
  upstream: string | null;
}

/** Longest message kept from a non-JSON error body, in characters. */
const MAX_MESSAGE_CHARS = 500;

/**
 * Maps a provider error `type`/`code` string to an error class, or null when unknown.
 * Sources: OpenAI error codes (https://platform.openai.com/docs/guides/error-codes), Anthropic
 * errors (https://docs.anthropic.com/en/api/errors): `overloaded_error` (529), `rate_limit_error`
 * (429), `invalid_request_error` (400), `authentication_error` (401), `permission_error` (403),
 * `not_found_error` (404), `request_too_large` (413), `api_error` (500).
 */
export function errorClassForType(type: string): ErrorClass | null {
  switch (type) {
    case 'overloaded_error':
    case 'overloaded':
      return 'overloaded';
    case 'rate_limit_error':
    case 'rate_limit_exceeded':
    case 'insufficient_quota':
    case 'tokens':
    case 'requests':
      return 'rate_limited';
    case 'invalid_request_error':
    case 'not_found_error':
    case 'request_too_large':
    case 'invalid_prompt':
    case 'context_length_exceeded':
    case 'unsupported_parameter':
      return 'invalid_request';
    case 'authentication_error':
    case 'permission_error':
    case 'invalid_api_key':
      return 'auth_error';
    case 'api_error':
    case 'server_error':
    case 'service_unavailable':
    case 'internal_error':
      return 'upstream_5xx';
    default:
      return null;
  }
}

/**
 * Maps an HTTP status to an error class: 2xx/1xx/3xx → null; 429 → rate_limited; 529 →
 * overloaded; 400/404/413/422 → invalid_request; 401/403 → auth_error; other 4xx → upstream_4xx;
 * 5xx → upstream_5xx. Source: ErrorClass in libs/contracts; Anthropic 529 = overloaded.
 */
export function errorClassForStatus(status: number): ErrorClass | null {
  if (status < 400) return null;
  if (status === 429) return 'rate_limited';
  if (status === 529) return 'overloaded';
  if (status === 400 || status === 404 || status === 413 || status === 422) return 'invalid_request';
  if (status === 401 || status === 403) return 'auth_error';
  if (status < 500) return 'upstream_4xx';
  return 'upstream_5xx';
}

/**
 * Reads the retry delay a provider asked for, in seconds: `retry-after-ms` (ms, OpenAI) wins,
 * else `retry-after` as delta-seconds or as an HTTP-date (taken relative to the response's
 * `Date` header when present, else to `nowMs`). Negative delays clamp to 0. null when absent or
 * unparseable. Source: RFC 9110 §10.2.3 (Retry-After); OpenAI sends `retry-after-ms`.
 */
export function retryAfterSeconds(
  headers: ResponseMeta['headers'] | undefined,
  nowMs: number = Date.now(),
): number | null {
  const ms = headerValue(headers, 'retry-after-ms');
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.max(0, Number(ms) / 1000);
  const ra = headerValue(headers, 'retry-after');
  if (ra === null) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.max(0, Number(ra));
  const at = Date.parse(ra);
  if (Number.isNaN(at)) return null;
  const dateHeader = headerValue(headers, 'date');
  const base = dateHeader !== null && !Number.isNaN(Date.parse(dateHeader)) ? Date.parse(dateHeader) : nowMs;
  return Math.max(0, (at - base) / 1000);
}

/** The error object of a provider error body, if `body` is one (OpenAI/OpenRouter `{error:{...}}`, Anthropic `{type:"error",error:{...}}`). */
export function errorObjectOf(
  body: unknown,
): { type: string | null; code: string | number | null; message: string | null; upstream?: string | null } | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const b = body as Record<string, unknown>;
  const e = b['error'];
  if (e !== null && typeof e === 'object' && !Array.isArray(e)) {
    const eo = e as Record<string, unknown>;
    const code = typeof eo['code'] === 'string' || typeof eo['code'] === 'number' ? eo['code'] : null;
    let message = typeof eo['message'] === 'string' ? eo['message'] : null;
    // OpenRouter wraps an upstream's error: metadata.provider_name and metadata.raw (the upstream's text).
    const md = eo['metadata'];
    let upstream: string | null = null;
    if (md !== null && typeof md === 'object' && !Array.isArray(md)) {
      const m = md as Record<string, unknown>;
      if (typeof m['provider_name'] === 'string') upstream = m['provider_name'];
      if (typeof m['raw'] === 'string' && m['raw'] !== '')
        message = message === null ? m['raw'] : `${message}: ${m['raw']}`;
    }
    return { type: typeof eo['type'] === 'string' ? eo['type'] : null, code, message, upstream };
  }
  if (typeof e === 'string') return { type: null, code: null, message: e };
  // Responses API stream error event: {type:"error", code, message}
  if (b['type'] === 'error' && (typeof b['message'] === 'string' || typeof b['code'] === 'string')) {
    return {
      type: null,
      code: typeof b['code'] === 'string' ? b['code'] : null,
      message: typeof b['message'] === 'string' ? b['message'] : null,
    };
  }
  return null;
}

/**
 * Classifies an error object from a body (or a stream event) whose HTTP status alone does not
 * say enough: the provider's type/code wins over the status (an in-stream `overloaded_error`
 * under a 200 is `overloaded`); a numeric code (OpenRouter puts the HTTP status there) is read as
 * a status; otherwise the HTTP status decides, and a 2xx with an unrecognised error body is
 * `upstream_5xx` (the provider failed the call after accepting it).
 */
export function classifyErrorObject(
  status: number,
  err: { type: string | null; code: string | number | null },
): ErrorClass {
  for (const t of [err.type, typeof err.code === 'string' ? err.code : null]) {
    if (t !== null) {
      const c = errorClassForType(t);
      if (c !== null) return c;
    }
  }
  if (typeof err.code === 'number') {
    const c = errorClassForStatus(err.code);
    if (c !== null) return c;
  }
  return errorClassForStatus(status) ?? 'upstream_5xx';
}

/**
 * Classifies a provider response as an error or not, from its status, headers and body text.
 *
 * - non-2xx: the status decides (see {@link errorClassForStatus}), except that a body error type
 *   refines it where the status is generic (a 500 whose type is `overloaded_error` → overloaded);
 *   a 429 stays rate_limited whatever its body (including OpenAI `insufficient_quota`).
 * - 2xx: an error body (`{error:{...}}` or Anthropic `{type:"error"}`) → its type's class; else null.
 * - `retryAfterS` from `retry-after-ms` / `retry-after` (see {@link retryAfterSeconds}).
 * - `message`: the body's error message, else the first 500 characters of a non-empty non-JSON body.
 * Never throws.
 * Sources: OpenAI https://platform.openai.com/docs/guides/error-codes; Anthropic
 * https://docs.anthropic.com/en/api/errors; OpenRouter https://openrouter.ai/docs/api-reference/errors.
 */
export function classifyError(status: number, headers: ResponseMeta['headers'], bodyText: string): ErrorClassification {
  const retryAfterS = retryAfterSeconds(headers);
  let parsed: unknown = undefined;
  const trimmed = bodyText.trim();
  if (trimmed.startsWith('{')) {
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      parsed = undefined;
    }
  }
  const err = errorObjectOf(parsed);
  const is2xx = status >= 200 && status < 300;
  if (is2xx) {
    if (err === null) return { errorClass: null, retryAfterS, message: null, upstream: null };
    return {
      errorClass: classifyErrorObject(status, err),
      retryAfterS,
      message: err.message,
      upstream: err.upstream ?? null,
    };
  }
  // 1xx/3xx reaching here are not a success the caller can use; they are not a server failure either.
  let errorClass = errorClassForStatus(status) ?? 'upstream_4xx';
  if (err !== null && status >= 500 && status !== 529 && err.type === 'overloaded_error') errorClass = 'overloaded';
  const message = err?.message ?? (trimmed.length > 0 ? trimmed.slice(0, MAX_MESSAGE_CHARS) : null);
  return { errorClass, retryAfterS, message, upstream: err?.upstream ?? null };
}
