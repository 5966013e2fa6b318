import type { Api } from '@shadowplane/contracts';

/**
 * Success bodies and SSE streams in each provider's wire format, modelled on the recorded
 * fixtures in test/fixtures/providers/ (chat-cached-tokens-1024.json,
 * chat-stream-include-usage-cached-1024.sse, responses-nonstream-reasoning.json,
 * responses-stream-basic.sse, messages-cache-*-4167.json, stream-cache-read-padded.sse,
 * openrouter chat-stream-cost.sse). Everything here is a pure function of the {@link Completion},
 * so the same completion always renders to the same bytes.
 */

/** Token usage of one completion, in the sim's inclusive terms (like the contracts' Usage). */
export interface SimUsage {
  /** all input tokens, cache reads and writes included */
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

/** Everything needed to render one successful response, on any API. */
export interface Completion {
  api: Api;
  /** model name echoed in bodies */
  model: string;
  /** response id (chatcmpl-…, resp_…, msg_…, gen-…) */
  id: string;
  /** Responses API output item id (msg_…) */
  itemId: string;
  created: number;
  /** seconds from created to completion (Responses `completed_at`) */
  durationS: number;
  pieces: string[];
  text: string;
  toolCall: { id: string; name: string; arguments: string } | null;
  finish: 'stop' | 'length' | 'tool_calls';
  usage: SimUsage;
  /** whether the response reports usage at all (false in usage_mode `never`) */
  usageReported: boolean;
  /** for OpenAI-shaped chat streams: whether the final usage chunk is sent */
  streamUsage: boolean;
  /** OpenRouter usage.cost breakdown in USD (null = cost reporting off) */
  cost: { total: number; prompt: number; completion: number } | null;
  /** OpenRouter upstream provider name */
  provider: string | null;
  /** echo of the request's output cap */
  maxTokens: number | null;
  instructions: string | null;
}

/** A stream as frames (each one complete SSE event text); content deltas are frames [deltaStart, deltaEnd). */
export interface StreamFrames {
  frames: string[];
  deltaStart: number;
  deltaEnd: number;
}

const SYSTEM_FINGERPRINT = 'fp_sim0000001';

function openaiUsage(u: SimUsage) {
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

function openrouterUsage(c: Completion) {
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

function anthropicUsage(u: SimUsage) {
  return {
    input_tokens: u.input - u.cacheRead - u.cacheWrite,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: { ephemeral_5m_input_tokens: u.cacheWrite, ephemeral_1h_input_tokens: 0 },
    output_tokens: u.output,
    service_tier: 'standard',
  };
}

function responsesUsage(u: SimUsage) {
  return {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cacheRead },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input + u.output,
  };
}

const ANTHROPIC_STOP = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use' } as const;

/** The non-streaming body for `c.api`, as exact text. */
export function renderJson(c: Completion): string {
  switch (c.api) {
    case 'openai.chat': {
      const message = c.toolCall
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: c.toolCall.id,
                type: 'function',
                function: { name: c.toolCall.name, arguments: c.toolCall.arguments },
              },
            ],
            refusal: null,
            annotations: [],
          }
        : { role: 'assistant', content: c.text, refusal: null, annotations: [] };
      return JSON.stringify({
        id: c.id,
        object: 'chat.completion',
        created: c.created,
        model: c.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: c.finish }],
        ...(c.usageReported ? { usage: openaiUsage(c.usage) } : {}),
        service_tier: 'default',
        system_fingerprint: SYSTEM_FINGERPRINT,
      });
    }
    case 'openrouter.chat': {
      const message = c.toolCall
        ? {
            role: 'assistant',
            content: '',
            refusal: null,
            reasoning: null,
            tool_calls: [
              {
                id: c.toolCall.id,
                index: 0,
                type: 'function',
                function: { name: c.toolCall.name, arguments: c.toolCall.arguments },
              },
            ],
          }
        : { role: 'assistant', content: c.text, refusal: null, reasoning: null };
      return JSON.stringify({
        id: c.id,
        provider: c.provider,
        model: c.model,
        object: 'chat.completion',
        created: c.created,
        choices: [{ logprobs: null, finish_reason: c.finish, native_finish_reason: c.finish, index: 0, message }],
        ...(c.usageReported ? { usage: openrouterUsage(c) } : {}),
      });
    }
    case 'anthropic.messages':
      return JSON.stringify({
        model: c.model,
        id: c.id,
        type: 'message',
        role: 'assistant',
        content: c.toolCall
          ? [
              {
                type: 'tool_use',
                id: c.toolCall.id,
                name: c.toolCall.name,
                input: JSON.parse(c.toolCall.arguments) as unknown,
              },
            ]
          : [{ type: 'text', text: c.text }],
        stop_reason: ANTHROPIC_STOP[c.finish],
        stop_sequence: null,
        ...(c.usageReported ? { usage: anthropicUsage(c.usage) } : {}),
      });
    case 'openai.responses':
      return JSON.stringify(responseObject(c, 'final'));
  }
}

function responseOutput(c: Completion): unknown[] {
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

function responseObject(c: Completion, phase: 'created' | 'final'): Record<string, unknown> {
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

const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const event = (type: string, o: unknown) => `event: ${type}\ndata: ${JSON.stringify(o)}\n\n`;

/** Splits a tool call's JSON arguments into a few stream fragments. */
function argFragments(args: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 8) out.push(args.slice(i, i + 8));
  return out.length > 0 ? out : [''];
}

/** The SSE stream for `c.api` as frames. */
export function renderStream(c: Completion): StreamFrames {
  switch (c.api) {
    case 'openai.chat':
    case 'openrouter.chat':
      return chatStream(c);
    case 'anthropic.messages':
      return anthropicStream(c);
    case 'openai.responses':
      return responsesStream(c);
  }
}

function chatStream(c: Completion): StreamFrames {
  const or = c.api === 'openrouter.chat';
  // OpenAI adds `"usage":null` to every chunk when include_usage is on (recorded fixture).
  const usageNull = !or && c.streamUsage ? { usage: null } : {};
  const head = or
    ? { id: c.id, provider: c.provider, model: c.model, object: 'chat.completion.chunk', created: c.created }
    : {
        id: c.id,
        object: 'chat.completion.chunk',
        created: c.created,
        model: c.model,
        service_tier: 'default',
        system_fingerprint: SYSTEM_FINGERPRINT,
      };
  const choice = (delta: unknown, finish: string | null) =>
    or
      ? { index: 0, delta, finish_reason: finish, native_finish_reason: finish, logprobs: null }
      : { index: 0, delta, logprobs: null, finish_reason: finish };
  const frames: string[] = [];
  if (or) frames.push(': OPENROUTER PROCESSING\n\n');
  frames.push(
    data({
      ...head,
      choices: [choice({ role: 'assistant', content: '', ...(or ? {} : { refusal: null }) }, null)],
      ...usageNull,
    }),
  );
  const deltaStart = frames.length;
  if (c.toolCall) {
    frames.push(
      data({
        ...head,
        choices: [
          choice(
            {
              tool_calls: [
                { index: 0, id: c.toolCall.id, type: 'function', function: { name: c.toolCall.name, arguments: '' } },
              ],
            },
            null,
          ),
        ],
        ...usageNull,
      }),
    );
    for (const a of argFragments(c.toolCall.arguments))
      frames.push(
        data({
          ...head,
          choices: [choice({ tool_calls: [{ index: 0, function: { arguments: a } }] }, null)],
          ...usageNull,
        }),
      );
  } else {
    for (const p of c.pieces)
      frames.push(
        data({
          ...head,
          choices: [choice(or ? { role: 'assistant', content: p } : { content: p }, null)],
          ...usageNull,
        }),
      );
  }
  const deltaEnd = frames.length;
  frames.push(
    data({ ...head, choices: [choice(or ? { role: 'assistant', content: '' } : {}, c.finish)], ...usageNull }),
  );
  if (c.usageReported && c.streamUsage) {
    frames.push(
      or
        ? data({ ...head, choices: [choice({ role: 'assistant', content: '' }, null)], usage: openrouterUsage(c) })
        : data({ ...head, choices: [], usage: openaiUsage(c.usage) }),
    );
  }
  frames.push('data: [DONE]\n\n');
  return { frames, deltaStart, deltaEnd };
}

function anthropicStream(c: Completion): StreamFrames {
  const u = anthropicUsage(c.usage);
  const frames: string[] = [];
  frames.push(
    event('message_start', {
      type: 'message_start',
      message: {
        model: c.model,
        id: c.id,
        type: 'message',
        role: 'assistant',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        ...(c.usageReported ? { usage: { ...u, output_tokens: Math.min(1, c.usage.output) } } : {}),
      },
    }),
  );
  if (c.toolCall)
    frames.push(
      event('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'tool_use', id: c.toolCall.id, name: c.toolCall.name, input: {} },
      }),
    );
  else
    frames.push(
      event('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      }),
    );
  frames.push(event('ping', { type: 'ping' }));
  const deltaStart = frames.length;
  if (c.toolCall) {
    for (const a of argFragments(c.toolCall.arguments))
      frames.push(
        event('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: a },
        }),
      );
  } else {
    for (const p of c.pieces)
      frames.push(
        event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: p } }),
      );
  }
  const deltaEnd = frames.length;
  frames.push(event('content_block_stop', { type: 'content_block_stop', index: 0 }));
  frames.push(
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: ANTHROPIC_STOP[c.finish], stop_sequence: null },
      ...(c.usageReported
        ? {
            usage: {
              input_tokens: u.input_tokens,
              cache_creation_input_tokens: u.cache_creation_input_tokens,
              cache_read_input_tokens: u.cache_read_input_tokens,
              output_tokens: u.output_tokens,
            },
          }
        : {}),
    }),
  );
  frames.push(event('message_stop', { type: 'message_stop' }));
  return { frames, deltaStart, deltaEnd };
}

function responsesStream(c: Completion): StreamFrames {
  let seq = 0;
  const ev = (type: string, o: Record<string, unknown>) => event(type, { type, ...o, sequence_number: seq++ });
  const frames: string[] = [];
  const created = responseObject(c, 'created');
  frames.push(ev('response.created', { response: created }));
  frames.push(ev('response.in_progress', { response: created }));
  const out = responseOutput(c)[0] as Record<string, unknown>;
  let deltaStart: number;
  let deltaEnd: number;
  if (c.toolCall) {
    const id = out.id as string;
    frames.push(
      ev('response.output_item.added', { item: { ...out, status: 'in_progress', arguments: '' }, output_index: 0 }),
    );
    deltaStart = frames.length;
    for (const a of argFragments(c.toolCall.arguments))
      frames.push(ev('response.function_call_arguments.delta', { delta: a, item_id: id, output_index: 0 }));
    deltaEnd = frames.length;
    frames.push(
      ev('response.function_call_arguments.done', { arguments: c.toolCall.arguments, item_id: id, output_index: 0 }),
    );
    frames.push(ev('response.output_item.done', { item: out, output_index: 0 }));
  } else {
    frames.push(
      ev('response.output_item.added', {
        item: { id: c.itemId, type: 'message', status: 'in_progress', content: [], role: 'assistant' },
        output_index: 0,
      }),
    );
    frames.push(
      ev('response.content_part.added', {
        content_index: 0,
        item_id: c.itemId,
        output_index: 0,
        part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
      }),
    );
    deltaStart = frames.length;
    for (const p of c.pieces)
      frames.push(
        ev('response.output_text.delta', {
          content_index: 0,
          delta: p,
          item_id: c.itemId,
          logprobs: [],
          output_index: 0,
        }),
      );
    deltaEnd = frames.length;
    frames.push(
      ev('response.output_text.done', {
        content_index: 0,
        item_id: c.itemId,
        logprobs: [],
        output_index: 0,
        text: c.text,
      }),
    );
    frames.push(
      ev('response.content_part.done', {
        content_index: 0,
        item_id: c.itemId,
        output_index: 0,
        part: { type: 'output_text', annotations: [], logprobs: [], text: c.text },
      }),
    );
    frames.push(ev('response.output_item.done', { item: out, output_index: 0 }));
  }
  const final = responseObject(c, 'final');
  frames.push(ev(c.finish === 'length' ? 'response.incomplete' : 'response.completed', { response: final }));
  return { frames, deltaStart, deltaEnd };
}
