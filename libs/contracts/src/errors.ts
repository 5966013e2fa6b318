/**
 * The error catalogue: every stable error code Shadowplane emits, with its HTTP status, whether a
 * retry can help, and a one-line meaning. Codes are lowercase snake_case, spelled as the provider
 * APIs spell theirs, and append-only: a code is never renamed or reused. `docs/errors.md` is
 * tested against this table.
 */
export const ERROR_CODES = {
  invalid_request: {
    httpStatus: 400,
    retryable: false,
    message: 'The request failed validation; details name the offending fields.',
  },
  invalid_json: { httpStatus: 400, retryable: false, message: 'The request body is not valid JSON.' },
  payload_too_large: {
    httpStatus: 413,
    retryable: false,
    message: 'The request body is larger than the configured limit.',
  },
  unsupported_media_type: { httpStatus: 415, retryable: false, message: 'The request body must be application/json.' },
  unauthenticated: { httpStatus: 401, retryable: false, message: 'No valid API key was presented.' },
  forbidden: { httpStatus: 403, retryable: false, message: 'The API key lacks the scope this route needs.' },
  not_found: { httpStatus: 404, retryable: false, message: 'No such resource.' },
  method_not_allowed: { httpStatus: 405, retryable: false, message: 'The route exists but not with this method.' },
  conflict: {
    httpStatus: 409,
    retryable: false,
    message: 'The resource is in a state that does not allow this change.',
  },
  unknown_provider: {
    httpStatus: 400,
    retryable: false,
    message: 'An arm names a provider id that is not on the operator allowlist.',
  },
  paid_dispatch_disabled: {
    httpStatus: 503,
    retryable: true,
    message: 'The paid_dispatch flag is off or unknown; no money may be spent.',
  },
  underpowered: {
    httpStatus: 422,
    retryable: false,
    message: 'require_power was set and a call type cannot reach the requested margin with max_items.',
  },
  budget_exhausted: {
    httpStatus: 409,
    retryable: false,
    message: 'A budget reservation was refused: the campaign would exceed max_cost_usd.',
  },
  report_not_ready: {
    httpStatus: 404,
    retryable: true,
    message: 'The verdict service has not written a report for this campaign yet.',
  },
  upstream_unavailable: {
    httpStatus: 502,
    retryable: true,
    message: 'The upstream could not be reached or failed before responding.',
  },
  upstream_timeout: { httpStatus: 504, retryable: true, message: 'The upstream did not answer in time.' },
  dependency_unavailable: {
    httpStatus: 503,
    retryable: true,
    message: 'A dependency (NATS, a KV bucket) is not reachable.',
  },
  config_invalid: { httpStatus: 500, retryable: false, message: 'The configuration failed validation at start.' },
  internal: { httpStatus: 500, retryable: false, message: 'An unexpected error; see the logs by request id.' },
  bundle_invalid: { httpStatus: 422, retryable: false, message: 'An evidence bundle failed verification.' },
  malformed_http: {
    httpStatus: 400,
    retryable: false,
    message:
      'The HTTP/1.1 message is malformed or ambiguous (framing, header syntax); the proxy refuses it rather than guess.',
  },
  request_timeout: {
    httpStatus: 408,
    retryable: true,
    message: 'The request did not arrive in time (head, body or whole-request deadline).',
  },
  expectation_failed: { httpStatus: 417, retryable: false, message: 'An Expect value other than 100-continue.' },
  headers_too_large: {
    httpStatus: 431,
    retryable: false,
    message: 'The request head is larger than the proxy accepts.',
  },
  not_implemented: {
    httpStatus: 501,
    retryable: false,
    message: 'A method or transfer coding the proxy does not relay (CONNECT, codings other than chunked).',
  },
  upstream_invalid_response: {
    httpStatus: 502,
    retryable: true,
    message: 'The upstream answered with something that is not valid HTTP/1.1.',
  },
  unknown_dataset: {
    httpStatus: 404,
    retryable: false,
    message:
      'No frozen dataset has this hash (a campaign source frozen:<hash> must name one POST /v1/suites/{suite}/freeze wrote).',
  },
  builder_unsupported: {
    httpStatus: 400,
    retryable: false,
    message:
      'The dataset builder is in the closed vocabulary but not implemented here. Reserved: every builder of the vocabulary (from_filter, from_failures, import, synthetic) is implemented, so no answer carries it now.',
  },
  judge_phase_unaffordable: {
    httpStatus: 422,
    retryable: false,
    message: 'max_cost_usd cannot cover one item of arm calls and its LLM-judge calls at their worst case.',
  },
  report_empty: {
    httpStatus: 422,
    retryable: false,
    message: 'Nothing was scored and nothing was refused: an empty report cannot be written.',
  },
  baseline_not_found: {
    httpStatus: 404,
    retryable: false,
    message: 'The suite has no pinned baseline, or the baseline run named does not exist.',
  },
  baseline_not_completed: {
    httpStatus: 409,
    retryable: true,
    message: 'The run named as a baseline has not ended with a final report (or does not fit the suite or arm).',
  },
  nats_server_unsupported: {
    httpStatus: 500,
    retryable: false,
    message:
      'The NATS server is older than 2.10.0, whose KV compare-and-set is unsafe on replicated buckets; a role that keeps the budget ledger refuses to start, and stops (exit 78) when it reconnects to such a server.',
  },
  nats_replicas_mismatch: {
    httpStatus: 500,
    retryable: false,
    message:
      'A stream, KV bucket or object store exists with a replica count other than SHADOWPLANE_NATS_REPLICAS; provisioning refuses to start.',
  },
} as const satisfies Record<string, { httpStatus: number; retryable: boolean; message: string }>;

/** A stable error code from {@link ERROR_CODES}. */
export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Base error for everything Shadowplane throws on purpose. Callers match on `code`, not on the
 * class. `details` is JSON-serialisable context (e.g. `{ field: "max_cost_usd" }`).
 */
export class ShadowplaneError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number;
  readonly retryable: boolean;
  readonly details: unknown;

  /**
   * @param code stable code from ERROR_CODES
   * @param message human text; defaults to the catalogue's meaning
   * @param opts details (JSON), cause (passed through to Error)
   */
  constructor(code: ErrorCode, message?: string, opts: { details?: unknown; cause?: unknown } = {}) {
    super(message ?? ERROR_CODES[code].message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ShadowplaneError';
    this.code = code;
    this.httpStatus = ERROR_CODES[code].httpStatus;
    this.retryable = ERROR_CODES[code].retryable;
    this.details = opts.details;
  }

  /** The HTTP API error body: `{ error: { code, message, details? } }`. */
  toBody(): { error: { code: ErrorCode; message: string; details?: unknown } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
      },
    };
  }
}

/** True when `e` is a ShadowplaneError (works across module copies by checking `code`). */
export function isShadowplaneError(e: unknown): e is ShadowplaneError {
  const code = e instanceof Error ? (e as unknown as { code?: unknown }).code : undefined;
  return typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);
}
