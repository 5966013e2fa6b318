import { describe, expect, it } from 'vitest';
import { prepareArmRequest } from './translate.js';

const anthropic = { api: 'anthropic.messages' as const, model: 'claude-x', maxOutputTokens: 1024 };
const chat = { api: 'openai.chat' as const, model: 'gpt-x', maxOutputTokens: 1024 };

describe('prepareArmRequest: OpenAI chat → Anthropic messages', () => {
  it('translates an assistant turn of 300,000 text parts (push(...parts) would throw and mark the request invalid)', () => {
    const parts = Array.from({ length: 300_000 }, () => ({ type: 'text', text: 'a' }));
    const r = prepareArmRequest(
      'openai.chat',
      {
        model: 'gpt-4o',
        messages: [
          { role: 'user', content: 'Q' },
          { role: 'assistant', content: parts },
        ],
      },
      anthropic,
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const msgs = r.body['messages'] as { content: unknown[] }[];
    expect(msgs[1]!.content).toHaveLength(300_000);
  });

  it('moves system prompts, maps stop, caps max tokens and translates tools and tool_choice', () => {
    const r = prepareArmRequest(
      'openai.chat',
      {
        model: 'gpt-4o',
        messages: [
          { role: 'system', content: 'Be terse.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in English.' }] },
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather by city',
              parameters: { type: 'object', properties: { city: { type: 'string' } } },
            },
          },
        ],
        tool_choice: 'required',
        parallel_tool_calls: false,
        stop: 'END',
        max_tokens: 4000,
        temperature: 0.2,
        top_p: 0.9,
        user: 'customer-42',
        store: true,
      },
      anthropic,
    );
    expect(r).toEqual({
      ok: true,
      api: 'anthropic.messages',
      stream: false,
      body: {
        model: 'claude-x',
        system: 'Be terse.\n\nAnswer in English.',
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '18C' }] },
        ],
        max_tokens: 1024,
        temperature: 0.2,
        top_p: 0.9,
        stop_sequences: ['END'],
        tools: [
          {
            name: 'get_weather',
            description: 'Weather by city',
            input_schema: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
      },
    });
  });

  it('keeps a smaller request cap and streaming', () => {
    const r = prepareArmRequest(
      'openai.chat',
      {
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        max_completion_tokens: 50,
        stream: true,
        stream_options: { include_usage: false },
      },
      anthropic,
    );
    expect(r).toEqual({
      ok: true,
      api: 'anthropic.messages',
      stream: true,
      body: { model: 'claude-x', messages: [{ role: 'user', content: 'hi' }], max_tokens: 50, stream: true },
    });
  });

  it.each([
    [{ n: 2 }, 'untranslatable:n'],
    [{ logprobs: true }, 'untranslatable:logprobs'],
    [{ seed: 7 }, 'untranslatable:seed'],
    [{ temperature: 1.5 }, 'untranslatable:temperature'],
    [
      { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } },
      'untranslatable:response_format',
    ],
    [{ frequency_penalty: 0.5 }, 'untranslatable:frequency_penalty'],
  ])('excludes %j with reason %s', (extra, reason) => {
    expect(
      prepareArmRequest(
        'openai.chat',
        { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra },
        anthropic,
      ),
    ).toEqual({ ok: false, reason });
  });

  it('refuses a system message after the conversation started', () => {
    const r = prepareArmRequest(
      'openai.chat',
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'system', content: 'b' },
        ],
      },
      anthropic,
    );
    expect(r).toEqual({ ok: false, reason: 'untranslatable:system_position' });
  });
});

describe('prepareArmRequest: Anthropic messages → OpenAI chat', () => {
  it('turns system, tool_use and tool_result into chat messages and tools into functions', () => {
    const r = prepareArmRequest(
      'anthropic.messages',
      {
        model: 'claude-sonnet',
        system: [{ type: 'text', text: 'You are a weather bot.', cache_control: { type: 'ephemeral' } }],
        messages: [
          { role: 'user', content: 'Paris?' },
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'tu_1', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'tu_1', content: '18C' },
              { type: 'text', text: 'And tomorrow?' },
            ],
          },
        ],
        tools: [
          {
            name: 'get_weather',
            description: 'Weather by city',
            input_schema: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
        tool_choice: { type: 'tool', name: 'get_weather' },
        stop_sequences: ['\n\nHuman:'],
        max_tokens: 300,
        temperature: 0.5,
        metadata: { user_id: 'u1' },
      },
      chat,
    );
    expect(r).toEqual({
      ok: true,
      api: 'openai.chat',
      stream: false,
      body: {
        model: 'gpt-x',
        messages: [
          { role: 'system', content: 'You are a weather bot.' },
          { role: 'user', content: 'Paris?' },
          {
            role: 'assistant',
            content: 'Checking.',
            tool_calls: [
              { id: 'tu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'tu_1', content: '18C' },
          { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
        ],
        max_completion_tokens: 300,
        temperature: 0.5,
        stop: ['\n\nHuman:'],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather by city',
              parameters: { type: 'object', properties: { city: { type: 'string' } } },
            },
          },
        ],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        store: false,
      },
    });
  });

  it('streams with usage requested and pins OpenRouter upstreams without fallbacks', () => {
    const r = prepareArmRequest(
      'anthropic.messages',
      { model: 'c', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5000, stream: true },
      { api: 'openrouter.chat', model: 'vendor/model', maxOutputTokens: 2048, pinUpstreams: ['SimEdge'] },
    );
    expect(r).toEqual({
      ok: true,
      api: 'openrouter.chat',
      stream: true,
      body: {
        model: 'vendor/model',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 2048,
        stream: true,
        stream_options: { include_usage: true },
        usage: { include: true },
        provider: { order: ['SimEdge'], allow_fallbacks: false },
      },
    });
  });

  it.each([
    [{ top_k: 5 }, 'untranslatable:top_k'],
    [{ thinking: { type: 'enabled', budget_tokens: 1000 } }, 'untranslatable:thinking'],
  ])('excludes %j with reason %s', (extra, reason) => {
    expect(
      prepareArmRequest(
        'anthropic.messages',
        { model: 'c', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10, ...extra },
        chat,
      ),
    ).toEqual({ ok: false, reason });
  });
});

describe('prepareArmRequest: same API, side effects and state', () => {
  it('swaps the model, forces store off and drops caller identity', () => {
    const r = prepareArmRequest(
      'openai.chat',
      {
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'x' }],
        store: true,
        user: 'u',
        metadata: { t: '1' },
        seed: 3,
      },
      { ...chat, maxOutputTokens: 64 },
    );
    expect(r).toEqual({
      ok: true,
      api: 'openai.chat',
      stream: false,
      body: {
        model: 'gpt-x',
        messages: [{ role: 'user', content: 'x' }],
        seed: 3,
        max_completion_tokens: 64,
        store: false,
      },
    });
  });

  it('excludes stateful Responses requests and provider-executed tools', () => {
    const resp = { api: 'openai.responses' as const, model: 'gpt-x', maxOutputTokens: 100 };
    expect(
      prepareArmRequest('openai.responses', { model: 'm', input: 'hi', previous_response_id: 'resp_1' }, resp),
    ).toEqual({ ok: false, reason: 'stateful_request' });
    expect(
      prepareArmRequest('openai.responses', { model: 'm', input: 'hi', tools: [{ type: 'web_search' }] }, resp),
    ).toEqual({ ok: false, reason: 'side_effect_tool:web_search' });
    expect(prepareArmRequest('openai.responses', { model: 'm', input: 'hi', store: true }, resp)).toEqual({
      ok: true,
      api: 'openai.responses',
      stream: false,
      body: { model: 'gpt-x', input: 'hi', store: false, max_output_tokens: 100 },
    });
    expect(prepareArmRequest('openai.responses', { model: 'm', input: 'hi' }, chat)).toEqual({
      ok: false,
      reason: 'untranslatable:api:openai.responses->openai.chat',
    });
  });

  it('excludes image parts, whose token cost the body cannot bound', () => {
    const r = prepareArmRequest(
      'openai.chat',
      {
        model: 'm',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }],
      },
      chat,
    );
    expect(r).toEqual({ ok: false, reason: 'unboundable_content:image_url' });
  });
});
