import type { Api, Cost, ErrorClass, RateCard, Usage } from '@shadowplane/contracts';
import { PROVIDER_ZERO_WITH_TOKENS } from '@shadowplane/contracts';
import type { ResponseMeta } from './headers.js';
import { providerReportedCost, rateCardCost } from './cost.js';
import { ResponseParser } from './response-stream.js';

// The public side of response parsing: the result types, the parser factory and the cost rule.
// The parser core is response-stream.ts; each wire dialect is read in its own module
// (response-openai-chat.ts, response-openai-responses.ts, response-anthropic.ts).

/** One tool call the model asked for (recorded, never executed). `arguments` is the JSON text as sent. */
export interface ToolCall {
  name: string;
  arguments: string;
}

/**
 * Everything Shadowplane records from one provider response. Token counts and costs are null when
 * the provider did not report them — never 0 in their place (docs/architecture.md honesty rule 4).
 */
export interface ParsedResponse {
  api: Api;
  /** HTTP status */
  status: number;
  /** true when the body was a server-sent event stream */
  stream: boolean;
  /** normalised usage; every field number|null; `raw` = the provider's usage block verbatim (Anthropic streams: message_start usage overlaid by message_delta usage) or null */
  usage: Usage;
  /** provider-reported cost in USD (OpenRouter `usage.cost`, plus `cost_details.upstream_inference_cost` on BYOK calls); null when absent; 0 only when reported as 0 */
  providerCostUsd: number | null;
  /** served-by echo (OpenRouter `provider`), else null */
  upstream: string | null;
  /** model echo */
  model: string | null;
  responseId: string | null;
  /** as the provider spells it: stop, length, tool_calls, end_turn, tool_use, completed, ... */
  finishReason: string | null;
  /** all text output concatenated ('' if none) */
  outputText: string;
  toolCalls: ToolCall[];
  /** ms from the stream start to the first content/token event; null unless timings were pushed, and for non-stream bodies */
  ttftMs: number | null;
  /** JSON parsed, or the stream's terminal event seen ([DONE], message_stop, response.completed|incomplete|failed) */
  complete: boolean;
  /** 2xx and no usage block at all: billed but uncounted */
  abandoned: boolean;
  /** null for a success; see ErrorClass */
  errorClass: ErrorClass | null;
  /** seconds, from retry-after-ms / retry-after; null if absent */
  retryAfterS: number | null;
  errorMessage: string | null;
}

/** Incremental response parser: feed bytes as they arrive, then call `end()` once. */
export interface StreamParser {
  /**
   * Feeds the next chunk. Never throws (hot path): a failure is recorded and surfaces as
   * `errorClass: 'malformed_response'` from `end()`. JSON and error bodies keep a reference to
   * the chunk until `end()` (no copy), so do not reuse or mutate a pushed buffer.
   * @param atMs arrival time of this chunk in ms (any monotonic clock shared with `startMs`); enables `ttftMs`
   */
  push(chunk: Uint8Array, atMs?: number): void;
  /** Finishes parsing and returns the result. Calling it again returns the same result. */
  end(atMs?: number): ParsedResponse;
}

/**
 * Creates an incremental parser for one provider response of wire API `api`.
 * The body kind is sniffed from the first non-whitespace byte (`{`/`[` → JSON, anything else →
 * SSE); `content-type: text/event-stream` only decides for an empty body (then `stream_cut`, else
 * `malformed_response`). Non-2xx bodies are buffered (up to 256 KiB) and classified with
 * {@link classifyError}.
 * @param startMs the time the request was sent (same clock as `push`'s `atMs`); when omitted the
 *   first pushed `atMs` is the start, so `ttftMs` measures from the first byte
 * `push` never throws; `end` never throws.
 * Sources: OpenAI chat streaming (https://platform.openai.com/docs/api-reference/chat-streaming),
 * Responses streaming events (https://platform.openai.com/docs/api-reference/responses-streaming),
 * Anthropic streaming (https://docs.anthropic.com/en/docs/build-with-claude/streaming),
 * OpenRouter (https://openrouter.ai/docs/api-reference/streaming).
 */
export function createResponseParser(api: Api, meta: ResponseMeta, startMs?: number): StreamParser {
  return new ResponseParser(api, meta, startMs);
}

/**
 * Parses one whole provider response (JSON body or SSE text) — the same as pushing it in one
 * chunk to {@link createResponseParser}. `ttftMs` is null (no timings). Never throws.
 */
export function parseResponse(api: Api, meta: ResponseMeta, body: Uint8Array | string): ParsedResponse {
  const p = createResponseParser(api, meta);
  p.push(typeof body === 'string' ? new TextEncoder().encode(body) : body);
  return p.end();
}

/** Reason on a cost whose provider-reported 0 came with billed tokens (libs/contracts). */
export { PROVIDER_ZERO_WITH_TOKENS };

/**
 * The cost to record for a parsed response: `provider_reported` when the provider reported a
 * cost, else `rate_card` from `card` when given, else unknown (`{usd:null, micro_usd:null,
 * basis:null, reason}` with reason `no_usage` when neither input nor output tokens were reported
 * — abandoned or error responses — `no_rate_card` otherwise). Bases never blend.
 * A provider-reported 0 with billed tokens (input or output > 0) is not a measured zero (a gateway
 * that reports `cost: 0` for a paid call would make the arm look free and the budget never trip):
 * with a rate card that prices those tokens above 0 the cost is the rate-card cost, labelled
 * `rate_card` with reason {@link PROVIDER_ZERO_WITH_TOKENS}; without a rate card it is unknown
 * (usd null, same reason), so the budget settles the reserved upper bound. Where the rate card is
 * itself 0 for those tokens (a free model) the provider's 0 agrees with it and stays
 * `provider_reported`.
 * Source: docs/architecture.md honesty rules 4–6.
 */
export function resolveCost(parsed: ParsedResponse, card?: RateCard): Cost {
  if (parsed.providerCostUsd !== null) {
    const c = providerReportedCost(parsed.providerCostUsd);
    const billed = (parsed.usage.input_tokens ?? 0) > 0 || (parsed.usage.output_tokens ?? 0) > 0;
    if (c.usd === 0 && billed) {
      if (card === undefined) return { usd: null, micro_usd: null, basis: null, reason: PROVIDER_ZERO_WITH_TOKENS };
      const rc = rateCardCost(parsed.usage, card);
      if (rc.usd === 0) return c; // a free model: the provider's 0 agrees with the card
      return { ...rc, reason: PROVIDER_ZERO_WITH_TOKENS };
    }
    if (c.usd !== null) return c;
  }
  if (card !== undefined) return rateCardCost(parsed.usage, card);
  const noUsage = parsed.usage.input_tokens === null && parsed.usage.output_tokens === null;
  return { usd: null, micro_usd: null, basis: null, reason: noUsage ? 'no_usage' : 'no_rate_card' };
}
