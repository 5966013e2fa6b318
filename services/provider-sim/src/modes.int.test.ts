import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResponse } from '@shadowplane/providers';
import type { Api } from '@shadowplane/contracts';
import { startProviderSim, type ProviderSim } from './index.js';

// Usage-reporting modes and the latency model, on a purpose-built config.
const prices = { input: 1, cached_input: 0.5, output: 2 };
let sim: ProviderSim;
beforeAll(async () => {
  sim = await startProviderSim({
    config: {
      models: {
        'never-usage': { accuracy: 0.5, prices, usage_mode: 'never' },
        'always-usage': { accuracy: 0.5, prices, usage_mode: 'always' },
        // TTFT exactly 300 ms, 100 tokens/s, filler exactly 40 tokens → ~400 ms of generation
        slow: {
          accuracy: 0.5,
          prices,
          latency: { ttft_ms: { median: 300, sigma: 0 }, output_tokens_per_s: 100, jitter: 0 },
          output_length: { median: 40, sigma: 0, min: 40, max: 40 },
        },
        'no-cost': { accuracy: 0.5, prices, openrouter: { cost: false, providers: ['A', 'B'], honor_pin: false } },
      },
    },
    datasetPath: '',
  });
});
afterAll(() => sim.close());

async function call(
  path: string,
  body: unknown,
): Promise<{ status: number; headers: Headers; text: string; chunkAtMs: number[]; t0: number }> {
  const t0 = performance.now();
  const r = await fetch(sim.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const chunkAtMs: number[] = [];
  let text = '';
  const dec = new TextDecoder();
  for await (const c of r.body!) {
    chunkAtMs.push(performance.now() - t0);
    text += dec.decode(c as Uint8Array, { stream: true });
  }
  return { status: r.status, headers: r.headers, text, chunkAtMs, t0 };
}

const msg = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'Say something useful.' }],
  ...extra,
});

describe('usage modes', () => {
  const cases: [Api, string, Record<string, unknown>][] = [
    ['openai.chat', '/v1/chat/completions', {}],
    ['openai.chat', '/v1/chat/completions', { stream: true, stream_options: { include_usage: true } }],
    ['openai.responses', '/v1/responses', {}],
    ['anthropic.messages', '/v1/messages', { max_tokens: 100 }],
    ['anthropic.messages', '/v1/messages', { max_tokens: 100, stream: true }],
    ['openrouter.chat', '/api/v1/chat/completions', { stream: true }],
  ];

  for (const [api, path, extra] of cases) {
    it(`never: ${api}${extra.stream ? ' stream' : ''} carries no usage block, so usage is null and the call abandoned`, async () => {
      const body =
        api === 'openai.responses'
          ? { model: 'never-usage', input: 'Say something.', ...extra }
          : msg('never-usage', extra);
      const r = await call(path, body);
      expect(r.status).toBe(200);
      const p = parseResponse(api, { status: r.status, headers: r.headers }, r.text);
      expect(p.errorClass).toBeNull();
      expect(p.usage.input_tokens).toBeNull();
      expect(p.usage.output_tokens).toBeNull();
      expect(p.abandoned).toBe(true);
    });
  }

  it('always: an OpenAI chat stream reports usage even without stream_options', async () => {
    const r = await call('/v1/chat/completions', msg('always-usage', { stream: true }));
    const p = parseResponse('openai.chat', { status: r.status, headers: r.headers }, r.text);
    expect(p.usage.output_tokens).toBeGreaterThan(0);
    expect(r.text).toContain('"choices":[],"usage":{');
  });

  it('OpenRouter cost off: no usage.cost, and an unhonoured pin is served by the default provider', async () => {
    const r = await call('/api/v1/chat/completions', msg('no-cost', { provider: { order: ['B'] } }));
    const body = JSON.parse(r.text) as { provider: string; usage: Record<string, unknown> };
    expect(body.provider).toBe('A');
    expect(body.usage).not.toHaveProperty('cost');
    expect(
      parseResponse('openrouter.chat', { status: r.status, headers: r.headers }, r.text).providerCostUsd,
    ).toBeNull();
  });
});

describe('latency model', () => {
  it('streams the first content after the configured TTFT and spreads the rest at the token rate', async () => {
    const r = await call('/v1/chat/completions', msg('slow', { stream: true }));
    expect(r.chunkAtMs[0]!).toBeGreaterThanOrEqual(290);
    const total = r.chunkAtMs.at(-1)!;
    // 300 ms TTFT + 40 tokens at 100 tok/s = 700 ms
    expect(total).toBeGreaterThanOrEqual(650);
    expect(total).toBeLessThan(10_000);
    expect(r.chunkAtMs.length).toBeGreaterThan(5);
  });

  it('delays a non-streaming response by TTFT plus generation time', async () => {
    const r = await call('/v1/chat/completions', msg('slow'));
    expect(r.chunkAtMs[0]!).toBeGreaterThanOrEqual(650);
    expect(r.headers.get('openai-processing-ms')).toBe('700');
  });
});

describe('faults with the latency model on', () => {
  const stream = async (fault: string, afterMs?: number) => {
    const t0 = performance.now();
    const r = await fetch(sim.url + '/v1/chat/completions', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-sim-fault': fault,
        ...(afterMs !== undefined ? { 'x-sim-fault-after-ms': String(afterMs) } : {}),
      },
      body: JSON.stringify(msg('slow', { stream: true, stream_options: { include_usage: true } })),
    });
    let text = '';
    let error: unknown = null;
    try {
      for await (const c of r.body!) text += new TextDecoder().decode(c as Uint8Array);
    } catch (e) {
      error = e;
    }
    return { text, error, ms: performance.now() - t0 };
  };

  it('cut: a paced stream still ends mid-way with an error on the client', async () => {
    const r = await stream('cut');
    expect(r.error).not.toBeNull();
    expect(r.text).toContain('"content":');
    expect(r.text).not.toContain('[DONE]');
    expect(r.text).not.toContain('"usage":{');
  });

  it('stall: a paced stream pauses, then completes with usage', async () => {
    const r = await stream('stall', 300);
    expect(r.error).toBeNull();
    expect(r.text).toContain('data: [DONE]');
    expect(r.text).toContain('"usage":{');
    expect(r.ms).toBeGreaterThanOrEqual(300 + 700 - 20);
  });
});
