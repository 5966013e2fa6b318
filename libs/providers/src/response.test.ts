import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createResponseParser, parseResponse, resolveCost } from './index.js';
import type { ResponseMeta } from './index.js';

const SSE: ResponseMeta = { status: 200, headers: { 'content-type': 'text/event-stream' } };
const JSON_META: ResponseMeta = { status: 200, headers: { 'content-type': 'application/json' } };
const enc = new TextEncoder();
const sse = (...events: string[]) => events.map((e) => `${e}\n\n`).join('');
const chatChunk = (o: object) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'm1', ...o })}`;

describe('OpenAI chat streams', () => {
  it('a stream with no usage yields null usage and abandoned: true, never zeros', () => {
    const body = sse(
      chatChunk({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }),
      chatChunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      'data: [DONE]',
    );
    const r = parseResponse('openai.chat', SSE, body);
    expect(r.usage).toEqual({
      input_tokens: null,
      cache_read_input_tokens: null,
      cache_creation_input_tokens: null,
      output_tokens: null,
      reasoning_output_tokens: null,
      raw: null,
    });
    expect(r.abandoned).toBe(true);
    expect(r.complete).toBe(true);
    expect(r.errorClass).toBeNull();
    expect(r.outputText).toBe('hi');
  });

  it('a last chunk with usage and empty choices parses without error', () => {
    const body = sse(
      chatChunk({ choices: [{ index: 0, delta: { content: 'ok' }, finish_reason: 'stop' }], usage: null }),
      chatChunk({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 } }),
      'data: [DONE]',
    );
    const r = parseResponse('openai.chat', SSE, body);
    expect(r.usage.input_tokens).toBe(7);
    expect(r.usage.output_tokens).toBe(1);
    expect(r.usage.cache_read_input_tokens).toBeNull(); // no prompt_tokens_details → not reported
    expect(r.usage.reasoning_output_tokens).toBeNull();
    expect(r.finishReason).toBe('stop');
    expect(r.errorClass).toBeNull();
    expect(r.abandoned).toBe(false);
  });

  it('accumulates streamed tool-call fragments by index', () => {
    const body = sse(
      chatChunk({
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [{ index: 0, id: 't1', type: 'function', function: { name: 'get_weather', arguments: '' } }],
            },
          },
        ],
      }),
      chatChunk({
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] } }],
      }),
      chatChunk({
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 1, id: 't2', function: { name: 'now', arguments: '{}' } }] } },
        ],
      }),
      chatChunk({
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] } }],
      }),
      chatChunk({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
      'data: [DONE]',
    );
    const r = parseResponse('openai.chat', SSE, body);
    expect(r.toolCalls).toEqual([
      { name: 'get_weather', arguments: '{"city":"Paris"}' },
      { name: 'now', arguments: '{}' },
    ]);
    expect(r.finishReason).toBe('tool_calls');
  });

  it('a stream that ends before [DONE] is stream_cut and, without usage, abandoned', () => {
    const r = parseResponse('openai.chat', SSE, sse(chatChunk({ choices: [{ index: 0, delta: { content: 'par' } }] })));
    expect(r.errorClass).toBe('stream_cut');
    expect(r.complete).toBe(false);
    expect(r.abandoned).toBe(true);
    expect(r.outputText).toBe('par');
  });

  it('an in-stream error object under a 200 is classified by its type', () => {
    const r = parseResponse(
      'openai.chat',
      SSE,
      sse(
        chatChunk({ choices: [{ index: 0, delta: { content: 'a' } }] }),
        'data: {"error":{"message":"boom","type":"server_error","code":null}}',
      ),
    );
    expect(r.errorClass).toBe('upstream_5xx');
    expect(r.errorMessage).toBe('boom');
  });

  it('an OpenRouter mid-stream error with a numeric code is read as that status', () => {
    const r = parseResponse(
      'openrouter.chat',
      SSE,
      sse(': OPENROUTER PROCESSING', 'data: {"error":{"code":502,"message":"Provider disconnected"}}', 'data: [DONE]'),
    );
    expect(r.errorClass).toBe('upstream_5xx');
    expect(r.errorMessage).toBe('Provider disconnected');
  });

  // Shape of OpenRouter's documented mid-stream error event (top-level `error` beside a
  // `choices` entry with finish_reason "error"), here also carrying the billed `usage`.
  it('keeps the usage carried by a mid-stream error chunk: billed tokens never vanish', () => {
    const errChunk = chatChunk({
      provider: 'Google',
      error: { code: 502, message: 'Provider disconnected' },
      choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
      usage: { prompt_tokens: 43, completion_tokens: 10, total_tokens: 53, cost: 0.0000215 },
    });
    const r = parseResponse(
      'openrouter.chat',
      SSE,
      sse(chatChunk({ choices: [{ index: 0, delta: { content: 'Par' } }] }), errChunk, 'data: [DONE]'),
    );
    expect(r.errorClass).toBe('upstream_5xx');
    expect(r.usage.input_tokens).toBe(43);
    expect(r.usage.output_tokens).toBe(10);
    expect(r.providerCostUsd).toBe(0.0000215);
    expect(r.abandoned).toBe(false);
    expect(r.finishReason).toBe('error');
    expect(r.upstream).toBe('Google');
  });
  it('keeps the usage of a final error chunk with no [DONE] after it', () => {
    const errChunk = chatChunk({
      error: { code: 'server_error', message: 'boom' },
      choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }],
      usage: { prompt_tokens: 43, completion_tokens: 10 },
    });
    const r = parseResponse(
      'openrouter.chat',
      SSE,
      sse(chatChunk({ choices: [{ index: 0, delta: { content: 'x' } }] }), errChunk),
    );
    expect(r.errorClass).not.toBeNull();
    expect([r.usage.input_tokens, r.usage.output_tokens]).toEqual([43, 10]);
  });

  it('an OpenRouter usage.cost of 0 is kept as a reported 0, not treated as missing', () => {
    const r = parseResponse(
      'openrouter.chat',
      SSE,
      sse(
        chatChunk({ provider: 'X', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, cost: 0 } }),
        'data: [DONE]',
      ),
    );
    expect(r.providerCostUsd).toBe(0);
    expect(r.upstream).toBe('X');
  });

  it('a BYOK OpenRouter call costs its credit charge plus the upstream charge to the own key', () => {
    const usage = {
      prompt_tokens: 1,
      completion_tokens: 1,
      cost: 0.00001,
      is_byok: true,
      cost_details: { upstream_inference_cost: 0.0002 },
    };
    const r = parseResponse('openrouter.chat', SSE, sse(chatChunk({ choices: [], usage }), 'data: [DONE]'));
    expect(r.providerCostUsd).toBe(0.00021);
    expect(resolveCost(r).micro_usd).toBe(210);
    const notByok = parseResponse(
      'openrouter.chat',
      SSE,
      sse(
        chatChunk({
          choices: [],
          usage: { ...usage, is_byok: false, cost_details: { upstream_inference_cost: 0.00001 } },
        }),
        'data: [DONE]',
      ),
    );
    expect(notByok.providerCostUsd).toBe(0.00001);
  });

  it('a data event that is not JSON marks the response malformed', () => {
    const r = parseResponse(
      'openai.chat',
      SSE,
      sse(
        'data: {not json',
        chatChunk({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }),
        'data: [DONE]',
      ),
    );
    expect(r.errorClass).toBe('malformed_response');
    expect(r.usage.input_tokens).toBe(1);
  });
});

describe('Anthropic streams', () => {
  const start = (usage: object) =>
    `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', model: 'claude-x', role: 'assistant', content: [], usage } })}`;
  const text = (t: string) =>
    `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } })}`;
  const delta = (usage: object) =>
    `event: message_delta\ndata: ${JSON.stringify({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage })}`;
  const stop = 'event: message_stop\ndata: {"type":"message_stop"}';

  it('merges message_start and message_delta: the delta output wins, input is not summed twice', () => {
    const r = parseResponse(
      'anthropic.messages',
      SSE,
      sse(
        start({ input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 30, output_tokens: 1 }),
        text('hi'),
        delta({ output_tokens: 42 }),
        stop,
      ),
    );
    // 20 + 100 + 30 = 150 input; output 42 (not 1, not 43)
    expect(r.usage.input_tokens).toBe(150);
    expect(r.usage.cache_read_input_tokens).toBe(100);
    expect(r.usage.cache_creation_input_tokens).toBe(30);
    expect(r.usage.output_tokens).toBe(42);
    expect(r.usage.raw).toEqual({
      input_tokens: 20,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 30,
      output_tokens: 42,
    });
  });

  it('a message_delta that repeats cumulative input counts replaces them rather than adding', () => {
    const r = parseResponse(
      'anthropic.messages',
      SSE,
      sse(
        start({ input_tokens: 5, cache_read_input_tokens: 0, output_tokens: 1 }),
        delta({ input_tokens: 5, cache_read_input_tokens: 0, output_tokens: 9 }),
        stop,
      ),
    );
    expect(r.usage.input_tokens).toBe(5);
    expect(r.usage.output_tokens).toBe(9);
  });

  it('a stream cut after message_start keeps the known input and leaves output null, never the running count', () => {
    const r = parseResponse(
      'anthropic.messages',
      SSE,
      sse(
        start({ input_tokens: 12, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 3 }),
        text('par'),
      ),
    );
    expect(r.errorClass).toBe('stream_cut');
    expect(r.usage.input_tokens).toBe(12);
    expect(r.usage.output_tokens).toBeNull();
    expect(r.abandoned).toBe(false);
  });

  it('an in-stream overloaded error event under a 200 is overloaded', () => {
    const r = parseResponse(
      'anthropic.messages',
      SSE,
      sse(
        start({ input_tokens: 1, output_tokens: 1 }),
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
      ),
    );
    expect(r.errorClass).toBe('overloaded');
    expect(r.errorMessage).toBe('Overloaded');
  });

  it('measures TTFT from startMs to the chunk carrying the first token event', () => {
    const p = createResponseParser('anthropic.messages', SSE, 1000);
    p.push(enc.encode(sse(start({ input_tokens: 1, output_tokens: 1 }))), 1100);
    p.push(enc.encode('event: ping\ndata: {"type": "ping"}\n\n'), 1200);
    p.push(enc.encode(sse(text('a'))), 1350);
    p.push(enc.encode(sse(text('b'), delta({ output_tokens: 2 }), stop)), 1400);
    const r = p.end(1450);
    expect(r.ttftMs).toBe(350);
    expect(r.outputText).toBe('ab');
  });
});

describe('OpenAI Responses streams', () => {
  const ev = (o: Record<string, unknown>) => `event: ${String(o['type'])}\ndata: ${JSON.stringify(o)}`;
  it('response.failed is terminal and classified from its error code', () => {
    const r = parseResponse(
      'openai.responses',
      SSE,
      sse(
        ev({ type: 'response.created', response: { id: 'resp_1', model: 'gpt-x', status: 'in_progress' } }),
        ev({
          type: 'response.failed',
          response: {
            id: 'resp_1',
            model: 'gpt-x',
            status: 'failed',
            error: { code: 'server_error', message: 'oops' },
            usage: null,
          },
        }),
      ),
    );
    expect(r.complete).toBe(true);
    expect(r.errorClass).toBe('upstream_5xx');
    expect(r.errorMessage).toBe('oops');
    expect(r.abandoned).toBe(true);
  });

  it('records function calls and an incomplete reason', () => {
    const r = parseResponse(
      'openai.responses',
      SSE,
      sse(
        ev({ type: 'response.function_call_arguments.delta', delta: '{"a":' }),
        ev({ type: 'response.output_item.done', item: { type: 'function_call', name: 'f', arguments: '{"a":1}' } }),
        ev({
          type: 'response.incomplete',
          response: {
            id: 'r',
            model: 'm',
            status: 'incomplete',
            incomplete_details: { reason: 'max_output_tokens' },
            usage: { input_tokens: 3, output_tokens: 4 },
          },
        }),
      ),
    );
    expect(r.toolCalls).toEqual([{ name: 'f', arguments: '{"a":1}' }]);
    expect(r.finishReason).toBe('max_output_tokens');
    expect(r.usage.input_tokens).toBe(3);
    expect(r.usage.cache_read_input_tokens).toBeNull();
  });
});

describe('JSON bodies and robustness', () => {
  it('a 200 whose body is not JSON is malformed_response', () => {
    const r = parseResponse('openai.chat', JSON_META, '{"id": "x", "choices": [');
    expect(r.errorClass).toBe('malformed_response');
    expect(r.complete).toBe(false);
    expect(r.abandoned).toBe(true);
  });

  it('an empty 200 body is malformed_response', () => {
    expect(parseResponse('anthropic.messages', JSON_META, '').errorClass).toBe('malformed_response');
  });

  it('reads a JSON error body sent as text/event-stream as JSON, and an empty event stream as cut', () => {
    const r = parseResponse(
      'anthropic.messages',
      SSE,
      '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    );
    expect(r.stream).toBe(false);
    expect(r.errorClass).toBe('overloaded');
    const empty = parseResponse('anthropic.messages', SSE, '');
    expect(empty.stream).toBe(true);
    expect(empty.errorClass).toBe('stream_cut');
  });

  it('sniffs SSE when content-type is missing and JSON when it starts with {', () => {
    const noCt: ResponseMeta = { status: 200, headers: [] };
    expect(
      parseResponse(
        'openai.chat',
        noCt,
        sse(chatChunk({ choices: [], usage: { prompt_tokens: 2, completion_tokens: 3 } }), 'data: [DONE]'),
      ).stream,
    ).toBe(true);
    const j = parseResponse(
      'openai.chat',
      noCt,
      '  {"id":"a","model":"m","choices":[{"index":0,"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":3}}',
    );
    expect(j.stream).toBe(false);
    expect(j.outputText).toBe('x');
    expect(j.usage.output_tokens).toBe(3);
  });

  // The recorded OpenRouter error body (test/fixtures/providers/openrouter/error-429-upstream-rate-limited.json)
  // as a 502 after generation began, with the `usage` OpenRouter adds to such failures.
  it('keeps the usage of a non-2xx JSON error body, with its reported cost', () => {
    const recorded = JSON.parse(
      readFileSync(
        fileURLToPath(
          new URL('../../../test/fixtures/providers/openrouter/error-429-upstream-rate-limited.json', import.meta.url),
        ),
        'utf8',
      ),
    ) as Record<string, unknown>;
    const body = JSON.stringify({
      ...recorded,
      error: { code: 502, message: 'Provider returned error', metadata: { provider_name: 'Google' } },
      usage: { prompt_tokens: 43, completion_tokens: 10, total_tokens: 53, cost: 0.0000215 },
    });
    const r = parseResponse('openrouter.chat', { status: 502, headers: { 'content-type': 'application/json' } }, body);
    expect(r.errorClass).toBe('upstream_5xx');
    expect([r.usage.input_tokens, r.usage.output_tokens]).toEqual([43, 10]);
    expect(r.usage.raw).not.toBeNull();
    expect(r.providerCostUsd).toBe(0.0000215);
    expect(resolveCost(r, { input: 2, output: 8 })).toMatchObject({ micro_usd: 22, basis: 'provider_reported' }); // 21.5 µ$ rounded up;
    // the same body without usage stays usage-free (nothing invented)
    const bare = parseResponse('openrouter.chat', { status: 429, headers: {} }, JSON.stringify(recorded));
    expect(bare.usage.raw).toBeNull();
    expect(bare.usage.input_tokens).toBeNull();
    expect(bare.providerCostUsd).toBeNull();
  });

  it('a non-JSON 502 body is upstream_5xx with the text as message', () => {
    const r = parseResponse(
      'openai.chat',
      { status: 502, headers: { 'content-type': 'text/html' } },
      '<html>Bad gateway</html>',
    );
    expect(r.errorClass).toBe('upstream_5xx');
    expect(r.errorMessage).toBe('<html>Bad gateway</html>');
    expect(r.abandoned).toBe(false);
  });

  it('push never throws, whatever bytes arrive, and end still returns a result', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (const api of ['openai.chat', 'openai.responses', 'anthropic.messages', 'openrouter.chat'] as const) {
      for (let round = 0; round < 20; round++) {
        const p = createResponseParser(api, round % 2 ? SSE : JSON_META);
        for (let k = 0; k < 20; k++) {
          const b = new Uint8Array(1 + Math.floor(rand() * 64));
          for (let i = 0; i < b.length; i++) b[i] = Math.floor(rand() * 256);
          expect(() => p.push(b, k)).not.toThrow();
        }
        const r = p.end();
        expect(r.errorClass === 'stream_cut' || r.errorClass === 'malformed_response').toBe(true);
      }
    }
  });

  it('end() is idempotent and pushes after end are ignored', () => {
    const p = createResponseParser('openai.chat', SSE);
    p.push(enc.encode(sse('data: [DONE]')));
    const a = p.end();
    p.push(enc.encode(sse(chatChunk({ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }))));
    expect(p.end()).toBe(a);
  });
});

describe('SSE memory bound', () => {
  it('an event that never ends (one huge line, no newline) stops being buffered past the bound → malformed_response, never a throw', async () => {
    const { createSseDecoder } = await import('./sse.js');
    const events: string[] = [];
    let overflowed = 0;
    const d = createSseDecoder(
      { onEvent: (e) => events.push(e.data), onOverflow: () => overflowed++ },
      { maxEventChars: 1000 },
    );
    d.push('data: {"a":1}\n\n');
    for (let i = 0; i < 50; i++) d.push(`data: ${'x'.repeat(100)}`);
    d.push('\n\ndata: late\n\n');
    d.end();
    expect(events).toEqual(['{"a":1}']);
    expect(overflowed).toBe(1);
    // many small complete events never trip the bound
    const ok: string[] = [];
    const d2 = createSseDecoder(
      { onEvent: (e) => ok.push(e.data), onOverflow: () => overflowed++ },
      { maxEventChars: 1000 },
    );
    for (let i = 0; i < 500; i++) d2.push(`data: ${i}\n\n`);
    d2.end();
    expect(ok.length).toBe(500);
    expect(overflowed).toBe(1);
  });

  it('a 65 MiB single-line stream through the response parser → malformed_response with the overflow named', () => {
    const p = createResponseParser('openai.chat', { status: 200, headers: { 'content-type': 'text/event-stream' } }, 0);
    const mb = new Uint8Array(1024 * 1024).fill(0x61);
    p.push(new TextEncoder().encode('data: '), 1);
    for (let i = 0; i < 65; i++) p.push(mb, i + 2);
    const r = p.end(100);
    expect(r.errorClass).toBe('malformed_response');
    expect(r.errorMessage).toMatch(/larger than the parser buffer/);
  });
});
