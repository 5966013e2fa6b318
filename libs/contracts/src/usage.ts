import { z } from 'zod';

/** A token count the provider reported, or null when it did not report it. null is not zero. */
const TokenCount = z.number().int().nonnegative().nullable();

/**
 * Usage normalised with the OpenTelemetry GenAI inclusion rules. Every field is a token count or
 * null (not reported — never coerced to 0):
 * - `input_tokens`: all input, cached reads and cache writes included
 * - `cache_read_input_tokens`, `cache_creation_input_tokens`: parts of `input_tokens`
 * - `output_tokens`: all output, reasoning included
 * - `reasoning_output_tokens`: part of `output_tokens`
 * - `raw`: the provider's usage block verbatim (null when there was none)
 *
 * Source: OpenTelemetry semantic conventions for GenAI (gen_ai.usage.*); docs/architecture.md "Contracts" (usage).
 * OpenAI `prompt_tokens` already include `cached_tokens`; Anthropic `input_tokens` exclude cache
 * reads and writes, which the adapter adds.
 */
export const Usage = z.object({
  input_tokens: TokenCount,
  cache_read_input_tokens: TokenCount,
  cache_creation_input_tokens: TokenCount,
  output_tokens: TokenCount,
  reasoning_output_tokens: TokenCount,
  raw: z.unknown(),
});
export type Usage = z.infer<typeof Usage>;

/** Usage with every field null: what a response without a usage block yields. */
export const NULL_USAGE: Readonly<Usage> = Object.freeze({
  input_tokens: null,
  cache_read_input_tokens: null,
  cache_creation_input_tokens: null,
  output_tokens: null,
  reasoning_output_tokens: null,
  raw: null,
});

/**
 * Where a cost figure comes from. `provider_reported` = the provider's own number (e.g.
 * OpenRouter `usage.cost`; "measured"); `rate_card` = reported tokens × configured prices
 * ("derived"); `estimate` = characters ÷ 4 × prices, for discovery only — never ranks or decides.
 * Source: docs/architecture.md honesty rule 5.
 */
export const CostBasis = z.enum(['provider_reported', 'rate_card', 'estimate']);
export type CostBasis = z.infer<typeof CostBasis>;

/**
 * A cost with its basis. `usd` is null when it cannot be known on any basis (then `basis` is
 * null and `reason` says why, e.g. `no_usage`, `no_rate_card`).
 * `micro_usd` is the same amount as an integer number of micro-dollars (rounded up, so a ledger
 * that sums it never under-counts), or null.
 */
export const Cost = z.object({
  usd: z.number().nonnegative().nullable(),
  micro_usd: z.number().int().nonnegative().nullable(),
  basis: CostBasis.nullable(),
  reason: z.string().optional(),
});
export type Cost = z.infer<typeof Cost>;

/**
 * `Cost.reason` when a provider-reported cost of 0 came with billed tokens (input or output > 0):
 * not a measured zero, so the cost is the rate-card cost (basis `rate_card`) or unknown (no rate
 * card), and the report counts the mismatch per arm (`ArmView.cost.n_provider_zero_mismatch`).
 */
export const PROVIDER_ZERO_WITH_TOKENS = 'provider_zero_with_billed_tokens';

/**
 * Prices in USD per million tokens. `cached_input` prices cache reads, `cache_write` prices cache
 * creation; when absent they fall back to `input` (documented in libs/providers `rateCardCost`).
 */
export const RateCard = z
  .object({
    input: z.number().nonnegative(),
    output: z.number().nonnegative(),
    cached_input: z.number().nonnegative().optional(),
    cache_write: z.number().nonnegative().optional(),
    /**
     * Price of cache writes with a 1-hour lifetime (Anthropic `cache_creation.ephemeral_1h_input_tokens`,
     * billed higher than 5-minute writes); falls back to `cache_write`, then `input`, when absent.
     */
    cache_write_1h: z.number().nonnegative().optional(),
  })
  .strict();
export type RateCard = z.infer<typeof RateCard>;

/** The wire APIs Shadowplane reads and speaks. OpenRouter is the OpenAI chat shape plus extras. */
export const Api = z.enum(['openai.chat', 'openai.responses', 'anthropic.messages', 'openrouter.chat']);
export type Api = z.infer<typeof Api>;

/**
 * The class of a failed provider call, as recorded in observations and used for retry decisions.
 * `rate_limited` (429), `overloaded` (529 / overloaded_error), `invalid_request` (400/404/422),
 * `auth_error` (401/403), `upstream_4xx` (other 4xx), `upstream_5xx` (5xx), `stream_cut` (a
 * stream ended before its terminal event), `hang_timeout` (no first byte, or a stall, past the
 * configured timeout), `network_error` (connection refused/reset), `malformed_response` (a 2xx
 * whose body could not be parsed).
 */
export const ErrorClass = z.enum([
  'rate_limited',
  'overloaded',
  'invalid_request',
  'auth_error',
  'upstream_4xx',
  'upstream_5xx',
  'stream_cut',
  'hang_timeout',
  'network_error',
  'malformed_response',
]);
export type ErrorClass = z.infer<typeof ErrorClass>;
