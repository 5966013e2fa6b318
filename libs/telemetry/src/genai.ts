/**
 * OpenTelemetry GenAI semantic-convention attribute names (development status in the spec, so
 * spelled once here), plus Shadowplane's own cost attributes — the spec has no cost attribute.
 * Source: OpenTelemetry semantic conventions for generative AI
 * (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/), as shipped in
 * @opentelemetry/semantic-conventions 1.45 `experimental_attributes`.
 */
export const GENAI = Object.freeze({
  PROVIDER_NAME: 'gen_ai.provider.name',
  OPERATION_NAME: 'gen_ai.operation.name',
  REQUEST_MODEL: 'gen_ai.request.model',
  REQUEST_MAX_TOKENS: 'gen_ai.request.max_tokens',
  REQUEST_STREAM: 'gen_ai.request.stream',
  RESPONSE_MODEL: 'gen_ai.response.model',
  RESPONSE_ID: 'gen_ai.response.id',
  RESPONSE_FINISH_REASONS: 'gen_ai.response.finish_reasons',
  RESPONSE_TIME_TO_FIRST_CHUNK: 'gen_ai.response.time_to_first_chunk',
  USAGE_INPUT_TOKENS: 'gen_ai.usage.input_tokens',
  USAGE_OUTPUT_TOKENS: 'gen_ai.usage.output_tokens',
  USAGE_CACHE_READ_INPUT_TOKENS: 'gen_ai.usage.cache_read.input_tokens',
  USAGE_CACHE_CREATION_INPUT_TOKENS: 'gen_ai.usage.cache_creation.input_tokens',
  USAGE_REASONING_OUTPUT_TOKENS: 'gen_ai.usage.reasoning.output_tokens',
  ERROR_TYPE: 'error.type',
  SERVER_ADDRESS: 'server.address',
  /** ours: cost in USD (number); absent when unknown, never 0 in its place */
  SHADOWPLANE_COST_USD: 'shadowplane.cost.usd',
  /** ours: `provider_reported` | `rate_card` | `estimate` */
  SHADOWPLANE_COST_BASIS: 'shadowplane.cost.basis',
} as const);

/** One of the attribute names in {@link GENAI}. */
export type GenAiAttribute = (typeof GENAI)[keyof typeof GENAI];

/** Usage as recorded (libs/contracts Usage); fields null when not reported. */
interface UsageLike {
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_input_tokens: number | null;
  cache_creation_input_tokens: number | null;
  reasoning_output_tokens: number | null;
}

/**
 * Span attributes for one model call's usage and cost. A null field is left out (OTel has no
 * null; leaving it out keeps "not reported" distinct from 0).
 */
export function genAiUsageAttributes(usage: UsageLike, cost?: { usd: number | null; basis: string | null }): Record<string, number | string> {
  const out: Record<string, number | string> = {};
  const put = (k: string, v: number | null) => {
    if (v !== null) out[k] = v;
  };
  put(GENAI.USAGE_INPUT_TOKENS, usage.input_tokens);
  put(GENAI.USAGE_OUTPUT_TOKENS, usage.output_tokens);
  put(GENAI.USAGE_CACHE_READ_INPUT_TOKENS, usage.cache_read_input_tokens);
  put(GENAI.USAGE_CACHE_CREATION_INPUT_TOKENS, usage.cache_creation_input_tokens);
  put(GENAI.USAGE_REASONING_OUTPUT_TOKENS, usage.reasoning_output_tokens);
  if (cost && cost.usd !== null && cost.basis !== null) {
    out[GENAI.SHADOWPLANE_COST_USD] = cost.usd;
    out[GENAI.SHADOWPLANE_COST_BASIS] = cost.basis;
  }
  return out;
}
