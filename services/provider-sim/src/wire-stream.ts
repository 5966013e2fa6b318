import type { Completion, StreamFrames } from './completion.js';
import {
  ANTHROPIC_STOP,
  anthropicUsage,
  argFragments,
  data,
  event,
  openaiUsage,
  openrouterUsage,
  responseObject,
  responseOutput,
  SYSTEM_FINGERPRINT,
} from './wire-parts.js';

// The SSE stream of each API as frames, content deltas marked so the server can pace them.

/** OpenAI / OpenRouter chat completion chunks, ending in `data: [DONE]`. */
export function chatStream(c: Completion): StreamFrames {
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

/** Anthropic Messages events, message_start to message_stop. */
export function anthropicStream(c: Completion): StreamFrames {
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

/** Responses API events with their sequence numbers, ending in response.completed (or .incomplete). */
export function responsesStream(c: Completion): StreamFrames {
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
