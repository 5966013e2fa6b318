import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { Attributes, Span } from '@opentelemetry/api';
import { getTracer } from './tracing.js';

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
export interface UsageLike {
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
export function genAiUsageAttributes(
  usage: UsageLike,
  cost?: { usd: number | null; basis: string | null },
): Record<string, number | string> {
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

/** What a GenAI client span starts with (known before the call). */
export interface GenAiCallStart {
  /** `gen_ai.operation.name`; the span is named `<operation> <requestModel>` */
  operation: 'chat' | 'text_completion' | 'embeddings';
  /** `gen_ai.provider.name`, e.g. from {@link genAiProviderName} */
  providerName: string;
  /** `gen_ai.request.model` */
  requestModel: string;
  /** `server.address` / `server.port` of the provider endpoint */
  serverAddress?: string;
  serverPort?: number;
  stream?: boolean;
  /** `gen_ai.request.max_tokens` */
  maxTokens?: number | null;
  /** more attributes (ours under `shadowplane.*`) */
  attributes?: Attributes;
}

/** What a GenAI client span ends with. Every nullable field left null is left off the span. */
export interface GenAiCallResult {
  responseModel: string | null;
  responseId: string | null;
  /** `gen_ai.response.finish_reasons`; empty = not reported (left off) */
  finishReasons: string[];
  /** usage as recorded (null fields = not reported), or null when no response */
  usage: UsageLike | null;
  /** cost with its basis; usd null = unknown (left off) */
  cost: { usd: number | null; basis: string | null } | null;
  /** `error.type`: our error class (`rate_limited`, `hang_timeout`, ...), null = success */
  errorType: string | null;
  /** HTTP status, or null when no response arrived */
  httpStatus: number | null;
  /** time to first chunk, seconds (`gen_ai.response.time_to_first_chunk`), null when unknown */
  ttftSeconds: number | null;
}

/**
 * `gen_ai.provider.name` for a wire API (`openai.chat` → `openai`, `anthropic.messages` →
 * `anthropic`, `openrouter.chat` → `openrouter`): the first dotted part, as the spec's
 * well-known values spell the first two.
 */
export function genAiProviderName(api: string): string {
  const i = api.indexOf('.');
  return i === -1 ? api : api.slice(0, i);
}

/**
 * Starts a CLIENT span for one model call, named `<operation> <model>` as the GenAI
 * conventions say, as a child of the active span. End it with {@link endGenAiSpan}.
 * Source: https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/
 */
export function startGenAiSpan(s: GenAiCallStart): Span {
  const attrs: Attributes = {
    [GENAI.OPERATION_NAME]: s.operation,
    [GENAI.PROVIDER_NAME]: s.providerName,
    [GENAI.REQUEST_MODEL]: s.requestModel,
    ...s.attributes,
  };
  if (s.serverAddress) attrs[GENAI.SERVER_ADDRESS] = s.serverAddress;
  if (s.serverPort !== undefined) attrs['server.port'] = s.serverPort;
  if (s.stream !== undefined) attrs[GENAI.REQUEST_STREAM] = s.stream;
  if (s.maxTokens !== undefined && s.maxTokens !== null) attrs[GENAI.REQUEST_MAX_TOKENS] = s.maxTokens;
  return getTracer().startSpan(`${s.operation} ${s.requestModel}`, { kind: SpanKind.CLIENT, attributes: attrs });
}

/**
 * Sets a GenAI span's response attributes and ends it: response model and id, finish reasons,
 * usage ({@link genAiUsageAttributes}: unreported figures absent, never 0), cost with its basis,
 * and on failure `error.type` with status ERROR. Never throws.
 */
export function endGenAiSpan(span: Span, r: GenAiCallResult): void {
  try {
    if (r.responseModel !== null) span.setAttribute(GENAI.RESPONSE_MODEL, r.responseModel);
    if (r.responseId !== null) span.setAttribute(GENAI.RESPONSE_ID, r.responseId);
    if (r.finishReasons.length > 0) span.setAttribute(GENAI.RESPONSE_FINISH_REASONS, r.finishReasons);
    if (r.httpStatus !== null) span.setAttribute('http.response.status_code', r.httpStatus);
    if (r.ttftSeconds !== null) span.setAttribute(GENAI.RESPONSE_TIME_TO_FIRST_CHUNK, r.ttftSeconds);
    if (r.usage) span.setAttributes(genAiUsageAttributes(r.usage, r.cost ?? undefined));
    else if (r.cost) span.setAttributes(genAiUsageAttributes(NO_USAGE, r.cost));
    if (r.errorType !== null) {
      span.setAttribute(GENAI.ERROR_TYPE, r.errorType);
      span.setStatus({ code: SpanStatusCode.ERROR, message: r.errorType });
    }
    span.end();
  } catch {
    // telemetry never throws into the caller
  }
}

const NO_USAGE: UsageLike = {
  input_tokens: null,
  output_tokens: null,
  cache_read_input_tokens: null,
  cache_creation_input_tokens: null,
  reasoning_output_tokens: null,
};
