import type { Completion, SimUsage } from './completion.js';

// The pieces the JSON bodies and the SSE streams share: usage objects in each provider's
// naming, the Responses API response object, and SSE framing.

/** `system_fingerprint` of OpenAI chat bodies and chunks. */
export const SYSTEM_FINGERPRINT = 'fp_sim0000001';

/** OpenAI chat `usage` (cache reads as `prompt_tokens_details.cached_tokens`). */
export function openaiUsage(u: SimUsage) {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** OpenRouter chat `usage`, with the cost breakdown when cost reporting is on. */
export function openrouterUsage(c: Completion) {
  const u = c.usage;
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    ...(c.cost ? { cost: c.cost.total, is_byok: false } : {}),
    prompt_tokens_details: { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite },
    ...(c.cost
      ? {
          cost_details: {
            upstream_inference_cost: c.cost.total,
            upstream_inference_prompt_cost: c.cost.prompt,
            upstream_inference_completions_cost: c.cost.completion,
          },
        }
      : {}),
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

/** Anthropic `usage`: `input_tokens` excludes cache reads and writes. */
export function anthropicUsage(u: SimUsage) {
  return {
    input_tokens: u.input - u.cacheRead - u.cacheWrite,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: u.output,
    service_tier: 'standard',
  };
}

/** Responses API `usage`. */
export function responsesUsage(u: SimUsage) {
  return {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cacheRead },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input + u.output,
  };
}

/** Anthropic `stop_reason` of each finish. */
export const ANTHROPIC_STOP = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' } as const;

/** The Responses API `output` items (one message or one function call). */
export function responseOutput(c: Completion): unknown[] {
  if (c.toolCall) {
    return [
      {
        id: c.itemId.replace(/^msg_/, 'fc_'),
        type: 'function_call',
        status: 'completed',
        arguments: c.toolCall.arguments,
        call_id: c.toolCall.id,
        name: c.toolCall.name,
      },
    ];
  }
  return [
    {
      id: c.itemId,
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: c.text }],
      role: 'assistant',
    },
  ];
}

/** The Responses API response object: `created` (in progress, no output) or `final`. */
export function responseObject(c: Completion, phase: 'created' | 'final'): Record<string, unknown> {
  const final = phase === 'final';
  const incomplete = c.finish === 'length';
  return {
    id: c.id,
    object: 'response',
    created_at: c.created,
    status: final ? (incomplete ? 'incomplete' : 'completed') : 'in_progress',
    background: false,
    completed_at: final && !incomplete ? c.created + c.durationS : null,
    error: null,
    incomplete_details: final && incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: c.instructions,
    max_output_tokens: c.maxTokens,
    model: c.model,
    output: final ? responseOutput(c) : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: false,
    temperature: 1.0,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_p: 1.0,
    truncation: 'disabled',
    usage: final && c.usageReported ? responsesUsage(c.usage) : null,
    user: null,
    metadata: {},
  };
}

/** An SSE `data:` frame. */
export const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
/** An SSE frame with an `event:` line. */
export const event = (type: string, o: unknown) => `event: ${type}\ndata: ${JSON.stringify(o)}\n\n`;

/** Splits a tool call's JSON arguments into a few stream fragments. */
export function argFragments(args: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 8) out.push(args.slice(i, i + 8));
  return out.length > 0 ? out : [''];
}
