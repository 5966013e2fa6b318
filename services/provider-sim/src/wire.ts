/**
 * Success bodies and SSE streams in each provider's wire format, modelled on the recorded
 * fixtures in test/fixtures/providers/ (chat-cached-tokens-1024.json,
 * chat-stream-include-usage-cached-1024.sse, responses-nonstream-reasoning.json,
 * responses-stream-basic.sse, messages-cache-*-4167.json, stream-cache-read-padded.sse,
 * openrouter chat-stream-cost.sse). Everything here is a pure function of the {@link Completion},
 * so the same completion always renders to the same bytes.
 */

import type { Completion, StreamFrames } from './completion.js';
import {
  ANTHROPIC_STOP,
  anthropicUsage,
  openaiUsage,
  openrouterUsage,
  responseObject,
  SYSTEM_FINGERPRINT,
} from './wire-parts.js';
import { anthropicStream, chatStream, responsesStream } from './wire-stream.js';

export type { Completion, SimUsage, StreamFrames } from './completion.js';

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
