import type { Api } from '@shadowplane/contracts';

/**
 * Error responses in each provider's wire shape. Bodies and headers are copied from the recorded
 * fixtures in test/fixtures/providers/ (see SOURCES.md there):
 * - OpenAI: `{"error":{"message","type","param","code"}}` (error-500-server-error.json,
 *   error-429-rate-limit-tokens.json, error-400-unsupported-parameter.json)
 * - Anthropic: `{"type":"error","error":{"type","message"},"request_id"}` with `x-should-retry`
 *   (error-529-overloaded.json + headers, error-429-rate-limit.json, error-400-invalid-request.json)
 * - OpenRouter: `{"error":{"code":<int>,"message","metadata"?},"user_id"?}`
 *   (error-429-upstream-rate-limited.json)
 */

/** A response ready to write. `body` is the exact bytes. */
export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What kind of error to render. */
export type ErrorKind =
  | { kind: 'rate_limit'; model: string; limit: 'requests' | 'tokens'; limitValue: number; retryAfterMs: number }
  | { kind: 'server_error' }
  | { kind: 'overloaded' }
  | { kind: 'invalid_request'; param: string | null; message: string; code: string | null }
  | { kind: 'invalid_json' }
  | { kind: 'model_not_found'; model: string }
  | { kind: 'unauthenticated' }
  | { kind: 'payload_too_large' }
  | { kind: 'no_endpoints'; model: string };

const JSON_CT = 'application/json';

function json(status: number, body: unknown, headers: Record<string, string> = {}): WireResponse {
  const text = JSON.stringify(body);
  return { status, headers: { 'content-type': JSON_CT, ...headers }, body: text };
}

function openai(
  status: number,
  message: string,
  type: string,
  param: string | null,
  code: string | null,
  headers: Record<string, string> = {},
): WireResponse {
  return json(status, { error: { message, type, param, code } }, headers);
}

function anthropic(
  status: number,
  type: string,
  message: string,
  requestId: string,
  headers: Record<string, string> = {},
): WireResponse {
  return json(
    status,
    { type: 'error', error: { type, message }, request_id: requestId },
    { 'request-id': requestId, ...headers },
  );
}

/**
 * Renders an error for `api`.
 * @param requestId the request id to quote (OpenAI puts it in the 500 message and
 *   `x-request-id`; Anthropic in `request_id` and `request-id`)
 */
export function errorResponse(api: Api, e: ErrorKind, requestId: string): WireResponse {
  const isAnthropic = api === 'anthropic.messages';
  const isOpenRouter = api === 'openrouter.chat';
  const oaHeaders = { 'x-request-id': requestId };
  switch (e.kind) {
    case 'rate_limit': {
      const retryS = Math.max(1, Math.ceil(e.retryAfterMs / 1000));
      if (isAnthropic) {
        return anthropic(
          429,
          'rate_limit_error',
          `This request would exceed your organization’s rate limit of ${e.limitValue.toLocaleString('en-US')} ${e.limit === 'tokens' ? 'input tokens' : 'requests'} per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits; see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later. You may also contact sales at https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.`,
          requestId,
          { 'retry-after': String(retryS), 'x-should-retry': 'true' },
        );
      }
      if (isOpenRouter) {
        // OpenRouter relays the upstream's 429 without retry-after (recorded fixture).
        return json(429, {
          error: {
            code: 429,
            message: 'Provider returned error',
            metadata: {
              provider_name: 'SimCloud',
              raw: `${e.model} is temporarily rate-limited upstream. Please retry shortly.`,
            },
          },
          user_id: 'user_sim',
        });
      }
      const what = e.limit === 'tokens' ? 'tokens per min (TPM)' : 'requests per min (RPM)';
      return openai(
        429,
        `Rate limit reached for ${e.model} in organization org-sim on ${what}: Limit ${e.limitValue}, Used ${e.limitValue}, Requested 1. Please try again in ${(e.retryAfterMs / 1000).toFixed(3)}s. Visit https://platform.openai.com/account/rate-limits to learn more.`,
        e.limit,
        null,
        'rate_limit_exceeded',
        { ...oaHeaders, 'retry-after': String(retryS), 'retry-after-ms': String(Math.ceil(e.retryAfterMs)) },
      );
    }
    case 'server_error':
      if (isAnthropic)
        return anthropic(500, 'api_error', 'Internal server error', requestId, { 'x-should-retry': 'true' });
      if (isOpenRouter) return json(500, { error: { code: 500, message: 'Internal Server Error' } });
      return openai(
        500,
        `The server had an error processing your request. Sorry about that! You can retry your request, or contact us through our help center at help.openai.com if you keep seeing this error. (Please include the request ID ${requestId} in your email.)`,
        'server_error',
        null,
        null,
        oaHeaders,
      );
    case 'overloaded':
      if (isAnthropic) {
        // The recorded 529 has no request_id in the body; its headers carry request-id.
        return {
          status: 529,
          headers: {
            'content-type': JSON_CT,
            'request-id': requestId,
            'x-should-retry': 'true',
            'cache-control': 'no-store, no-cache',
          },
          body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
        };
      }
      if (isOpenRouter)
        return json(503, {
          error: { code: 503, message: 'No instances available', metadata: { provider_name: 'SimCloud' } },
        });
      return openai(
        503,
        'The engine is currently overloaded, please try again later.',
        'server_error',
        null,
        null,
        oaHeaders,
      );
    case 'invalid_request':
      if (isAnthropic) return anthropic(400, 'invalid_request_error', e.message, requestId);
      if (isOpenRouter) return json(400, { error: { code: 400, message: e.message } });
      return openai(400, e.message, 'invalid_request_error', e.param, e.code, oaHeaders);
    case 'invalid_json':
      if (isAnthropic)
        return anthropic(
          400,
          'invalid_request_error',
          'There was an error parsing the body of your request.',
          requestId,
        );
      if (isOpenRouter) return json(400, { error: { code: 400, message: 'Invalid JSON in request body' } });
      return openai(
        400,
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
        'invalid_request_error',
        null,
        null,
        oaHeaders,
      );
    case 'model_not_found':
      if (isAnthropic) return anthropic(404, 'not_found_error', `model: ${e.model}`, requestId);
      if (isOpenRouter) return json(400, { error: { code: 400, message: `${e.model} is not a valid model ID` } });
      return openai(
        404,
        `The model \`${e.model}\` does not exist or you do not have access to it.`,
        'invalid_request_error',
        null,
        'model_not_found',
        oaHeaders,
      );
    case 'unauthenticated':
      if (isAnthropic) return anthropic(401, 'authentication_error', 'x-api-key header is required', requestId);
      if (isOpenRouter) return json(401, { error: { code: 401, message: 'No auth credentials found' } });
      return openai(
        401,
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        'invalid_request_error',
        null,
        null,
        oaHeaders,
      );
    case 'payload_too_large':
      if (isAnthropic)
        return anthropic(413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.', requestId);
      if (isOpenRouter) return json(413, { error: { code: 413, message: 'Request too large' } });
      return openai(413, 'Request too large.', 'invalid_request_error', null, null, oaHeaders);
    case 'no_endpoints':
      return json(404, {
        error: { code: 404, message: `No endpoints found that can handle the requested parameters for ${e.model}.` },
      });
  }
}
