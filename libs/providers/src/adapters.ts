/**
 * One adapter per wire API: everything Shadowplane knows about talking to a provider's endpoint
 * lives here — the request path and the one rule for joining it to a provider's `base_url`, the
 * auth and version headers, the inbound path the sidecar recognises, and the worst-case cost
 * bound the budget reserves. The duplicator's arms, its judge calls, control's dry run and
 * provider-sim all read these tables, so they cannot disagree.
 *
 * Request bodies are translated by {@link prepareArmRequest} (translate.ts) and responses parsed
 * by the dialects in response.ts; both are keyed by the same {@link Api}.
 */
import type { Api, RateCard } from '@shadowplane/contracts';
import { rateCardCost } from './cost.js';

/** What differs between wire APIs when Shadowplane calls one. */
export interface WireAdapter {
  readonly api: Api;
  /** request path appended to a provider's `base_url`; the base URL ends at the API version (`…/v1`) */
  readonly path: string;
  /** the full path a client sends to the provider's public host (what provider-sim serves) */
  readonly publicPath: string;
  /** header that carries the API key */
  readonly authHeader: 'authorization' | 'x-api-key';
  /** fixed headers every request carries (API version pins) */
  readonly fixedHeaders: Readonly<Record<string, string>>;
  /** an example base URL for error messages and docs */
  readonly exampleBaseUrl: string;
}

/** Anthropic's API version pin (docs.anthropic.com "Versions"); the Messages shape Shadowplane parses. */
const ANTHROPIC_VERSION = '2023-06-01';

const chat = (api: Api, publicPath: string, exampleBaseUrl: string): WireAdapter =>
  Object.freeze({
    api,
    path: '/chat/completions',
    publicPath,
    authHeader: 'authorization' as const,
    fixedHeaders: Object.freeze({}),
    exampleBaseUrl,
  });

/** The adapter of each wire API. OpenRouter is an OpenAI-chat variant (same path and auth, its own host). */
export const WIRE_ADAPTERS: Readonly<Record<Api, WireAdapter>> = Object.freeze({
  'openai.chat': chat('openai.chat', '/v1/chat/completions', 'https://api.openai.com/v1'),
  'openrouter.chat': chat('openrouter.chat', '/api/v1/chat/completions', 'https://openrouter.ai/api/v1'),
  'openai.responses': Object.freeze({
    api: 'openai.responses' as const,
    path: '/responses',
    publicPath: '/v1/responses',
    authHeader: 'authorization' as const,
    fixedHeaders: Object.freeze({}),
    exampleBaseUrl: 'https://api.openai.com/v1',
  }),
  'anthropic.messages': Object.freeze({
    api: 'anthropic.messages' as const,
    path: '/messages',
    publicPath: '/v1/messages',
    authHeader: 'x-api-key' as const,
    fixedHeaders: Object.freeze({ 'anthropic-version': ANTHROPIC_VERSION }),
    exampleBaseUrl: 'https://api.anthropic.com/v1',
  }),
});

/** The adapter for `api`. */
export function adapterFor(api: Api): WireAdapter {
  return WIRE_ADAPTERS[api];
}

/** A base URL's path must end at an API version segment: `/v1`, `/api/v1`, `/openai/v1`, `/v1beta`. */
const VERSION_TAIL = /\/v\d+(?:(?:alpha|beta)\d*)?$/;

/**
 * Why `baseUrl` cannot serve `api`, or null when it can. The rule (one for every role): the base
 * URL is an http(s) URL without query or fragment whose path ends at the API version, and the
 * adapter's request path is appended to it — `https://api.anthropic.com/v1` + `/messages`. A base
 * URL that already ends in the request path, or stops at the host, is refused instead of guessed.
 */
export function baseUrlProblem(api: Api, baseUrl: string): string | null {
  const a = adapterFor(api);
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    return `base_url must be an absolute URL, e.g. ${a.exampleBaseUrl}`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `base_url must be http(s), got ${u.protocol}`;
  if (u.search || u.hash) return 'base_url must not carry a query or fragment';
  const path = u.pathname.replace(/\/+$/, '');
  if (path.endsWith(a.path))
    return `base_url must stop at the API version, without the request path ${a.path} (e.g. ${a.exampleBaseUrl})`;
  if (!VERSION_TAIL.test(path))
    return `base_url must end at the API version, e.g. ${a.exampleBaseUrl} (Shadowplane appends ${a.path})`;
  return null;
}

/**
 * The URL one request to `api` goes to: `baseUrl` (trailing slashes dropped) + the adapter's
 * path. Throws RangeError when {@link baseUrlProblem} refuses the base URL, so a bad entry fails
 * where it is configured rather than as a 404 per call.
 */
export function requestUrl(api: Api, baseUrl: string): string {
  const problem = baseUrlProblem(api, baseUrl);
  if (problem) throw new RangeError(problem);
  return `${baseUrl.replace(/\/+$/, '')}${adapterFor(api).path}`;
}

/**
 * Headers of one request to `api`: content type, accept (SSE when streaming), the API's version
 * pins, and the key in the API's auth header (`Authorization: Bearer …` or `x-api-key`) when a
 * key is configured.
 */
export function requestHeaders(api: Api, o: { apiKey: string | null; stream: boolean }): Record<string, string> {
  const a = adapterFor(api);
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: o.stream ? 'text/event-stream' : 'application/json',
    ...a.fixedHeaders,
  };
  if (o.apiKey) h[a.authHeader] = a.authHeader === 'authorization' ? `Bearer ${o.apiKey}` : o.apiKey;
  return h;
}

/**
 * An upper bound on the prompt tokens of a request body: its UTF-8 byte length as sent (JSON).
 * Byte-level BPE tokenizers (OpenAI o200k/cl100k, Anthropic's) emit at least one byte per
 * token, and the JSON syntax around the text (quotes, keys, braces) outweighs the few template
 * tokens a chat format adds per message, so tokens ≤ bytes for text-only bodies. Items with
 * image/audio/file parts are excluded before this (their token cost is not a function of their
 * bytes). Loose (≈ 4× for English), which costs reservation headroom, never the invariant.
 */
export function promptTokensUpperBound(body: unknown): number {
  return Buffer.byteLength(JSON.stringify(body), 'utf8');
}

/**
 * Upper bound of one call's cost in micro-USD (rounded up): every input token at the highest
 * input-side price of the card (input, cached input or cache write) plus `maxOutputTokens` at the
 * output price. `inputTokensBound` must itself be an upper bound ({@link promptTokensUpperBound}).
 * The one formula the duplicator reserves with and control's dry run estimates with.
 */
export function attemptUpperBoundMicroUsd(inputTokensBound: number, maxOutputTokens: number, card: RateCard): number {
  const worstIn = Math.max(card.input, card.cached_input ?? card.input, card.cache_write ?? card.input);
  const c = rateCardCost(
    {
      input_tokens: inputTokensBound,
      output_tokens: maxOutputTokens,
      cache_read_input_tokens: null,
      cache_creation_input_tokens: null,
      reasoning_output_tokens: null,
      raw: null,
    },
    { input: worstIn, output: card.output },
  );
  return c.micro_usd ?? Number.MAX_SAFE_INTEGER;
}
