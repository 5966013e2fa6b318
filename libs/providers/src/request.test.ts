import { describe, expect, it } from 'vitest';
import { detectApi, isStreamingRequest, requestMaxOutputTokens, requestModel, requestPromptText } from './index.js';

describe('detectApi', () => {
  it.each([
    ['/v1/chat/completions', undefined, 'openai.chat'],
    ['/v1/chat/completions?x=1', undefined, 'openai.chat'],
    ['/v1/chat/completions/', undefined, 'openai.chat'],
    ['/api/v1/chat/completions', undefined, 'openrouter.chat'],
    ['/v1/chat/completions', 'openrouter.ai', 'openrouter.chat'],
    ['/openai/v1/chat/completions', undefined, 'openai.chat'],
    ['/v1/responses', undefined, 'openai.responses'],
    ['/v1/responses/resp_123', undefined, null],
    ['/v1/messages', 'api.anthropic.com:443', 'anthropic.messages'],
    ['/v1/messages/count_tokens', undefined, null],
    ['/v1/embeddings', undefined, null],
  ])('%s (host %s) → %s', (path, host, api) => expect(detectApi(path, host)).toBe(api));
});

describe('request readers', () => {
  it('collects chat prompt text from string and part contents, all roles, in order', () => {
    const body = {
      model: 'gpt-x',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hello' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
        { role: 'assistant', content: 'Hi' },
      ],
    };
    expect(requestPromptText('openai.chat', body)).toBe('Be brief.\nHello\nHi');
    expect(requestModel('openai.chat', body)).toBe('gpt-x');
  });

  it('reads a request with 300,000 content parts or tool results nested 100,000 deep without overflowing the stack', () => {
    // both fit in a few MB of JSON; `push(...parts)` or recursion per level would throw RangeError
    const many = { system: Array.from({ length: 300_000 }, () => 'a'), messages: [] };
    expect(requestPromptText('anthropic.messages', many).length).toBe(2 * 300_000 - 1);
    let nested: unknown = 'deep';
    for (let i = 0; i < 100_000; i++) nested = [{ type: 'tool_result', content: nested }];
    const body = { messages: [{ role: 'user', content: [{ type: 'text', text: 'top' }, ...(nested as unknown[])] }] };
    expect(requestPromptText('anthropic.messages', body)).toBe('top\ndeep');
  });

  it('collects Responses instructions and input items', () => {
    expect(requestPromptText('openai.responses', { instructions: 'Sys', input: 'Q' })).toBe('Sys\nQ');
    expect(
      requestPromptText('openai.responses', {
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'A' }] },
          { type: 'function_call_output', call_id: 'c', output: 'B' },
        ],
      }),
    ).toBe('A\nB');
  });

  it('collects Anthropic system blocks and message blocks, including tool results', () => {
    const body = {
      system: [{ type: 'text', text: 'S' }],
      messages: [
        { role: 'user', content: 'U' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'R' }] }] },
      ],
    };
    expect(requestPromptText('anthropic.messages', body)).toBe('S\nU\nR');
  });

  it('returns empty text for a body it cannot read, never throws', () => {
    expect(requestPromptText('openai.chat', null)).toBe('');
    expect(requestPromptText('anthropic.messages', { messages: 'nope' })).toBe('');
  });

  it('reads the output cap per API', () => {
    expect(requestMaxOutputTokens('openai.chat', { max_tokens: 10, max_completion_tokens: 20 })).toBe(20);
    expect(requestMaxOutputTokens('openrouter.chat', { max_tokens: 10 })).toBe(10);
    expect(requestMaxOutputTokens('openai.responses', { max_output_tokens: 30 })).toBe(30);
    expect(requestMaxOutputTokens('anthropic.messages', { max_tokens: 40 })).toBe(40);
    expect(requestMaxOutputTokens('openai.chat', { max_tokens: 0 })).toBeNull();
    expect(requestMaxOutputTokens('openai.chat', {})).toBeNull();
  });

  it('says whether a request streams', () => {
    expect(isStreamingRequest('openai.chat', { stream: true })).toBe(true);
    expect(isStreamingRequest('openai.chat', { stream: 'true' })).toBe(false);
    expect(isStreamingRequest('anthropic.messages', {})).toBe(false);
  });
});
