import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { encode } from 'gpt-tokenizer';
import { createResponseParser, parseResponse } from '@shadowplane/providers';
import type { Api } from '@shadowplane/contracts';
import { DEFAULT_SIM_CONFIG, startProviderSim, type ProviderSim } from './index.js';

// The official SDKs, unmodified, against the sim. Each client gets a fetch that tees the raw
// response so the same bytes can be fed to our own libs/providers parsers.
interface Captured {
  status: number;
  headers: Headers;
  body: Promise<Uint8Array>;
}

function teeFetch(into: Captured[]): typeof fetch {
  return async (input, init) => {
    const r = await fetch(input, init);
    const copy = r.clone();
    into.push({ status: r.status, headers: r.headers, body: copy.arrayBuffer().then((b) => new Uint8Array(b)) });
    return r;
  };
}

let sim: ProviderSim;
const captured: Captured[] = [];
let openai: OpenAI;
let openrouter: OpenAI;
let anthropic: Anthropic;

const QUESTION =
  'A robe takes 2 bolts of blue fiber and half that much white fiber.  How many bolts in total does it take?';

beforeAll(async () => {
  sim = await startProviderSim({ config: { ...DEFAULT_SIM_CONFIG, latency_scale: 0.2 }, seed: 7 });
  openai = new OpenAI({ apiKey: 'sk-sim', baseURL: `${sim.url}/v1`, maxRetries: 0, fetch: teeFetch(captured) });
  openrouter = new OpenAI({
    apiKey: 'sk-or-sim',
    baseURL: `${sim.url}/api/v1`,
    maxRetries: 0,
    fetch: teeFetch(captured),
  });
  anthropic = new Anthropic({ apiKey: 'sk-ant-sim', baseURL: sim.url, maxRetries: 0, fetch: teeFetch(captured) });
});
afterAll(async () => {
  await sim.close();
});

/** Parses the last captured response with our parser, whole and fed in 7-byte chunks. */
async function ourUsage(api: Api) {
  const c = captured.at(-1)!;
  const bytes = await c.body;
  const whole = parseResponse(api, { status: c.status, headers: c.headers }, bytes);
  const p = createResponseParser(api, { status: c.status, headers: c.headers });
  for (let i = 0; i < bytes.length; i += 7) p.push(bytes.subarray(i, i + 7));
  const chunked = p.end();
  expect(chunked.usage).toEqual(whole.usage);
  return whole;
}

describe('official openai SDK against the sim', () => {
  it('completes a plain chat call and reports usage that matches the text and our parser', async () => {
    const r = await openai.chat.completions.create({
      model: 'sim-large',
      messages: [{ role: 'user', content: QUESTION }],
    });
    const text = r.choices[0]!.message.content!;
    expect(text).toMatch(/#### \d+$/);
    expect(r.usage!.completion_tokens).toBe(encode(text).length);
    expect(r.usage!.prompt_tokens).toBeGreaterThan(encode(QUESTION).length);
    expect(r.usage!.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
    const ours = await ourUsage('openai.chat');
    expect(ours.usage.input_tokens).toBe(r.usage!.prompt_tokens);
    expect(ours.usage.output_tokens).toBe(r.usage!.completion_tokens);
    expect(ours.usage.cache_read_input_tokens).toBe(r.usage!.prompt_tokens_details!.cached_tokens);
    expect(ours.usage.reasoning_output_tokens).toBe(r.usage!.completion_tokens_details!.reasoning_tokens);
    expect(ours.outputText).toBe(text);
  });

  it('streams chat with stream_options.include_usage and reports usage in the last chunk', async () => {
    const stream = await openai.chat.completions.create({
      model: 'sim-medium',
      messages: [{ role: 'user', content: 'Write a short note about budgets.' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunks = 0;
    for await (const ch of stream) {
      chunks++;
      text += ch.choices[0]?.delta.content ?? '';
      if (ch.usage) usage = ch.usage;
    }
    expect(chunks).toBeGreaterThan(3);
    expect(usage).toBeDefined();
    expect(usage!.completion_tokens).toBe(encode(text).length);
    const ours = await ourUsage('openai.chat');
    expect(ours.complete).toBe(true);
    expect(ours.usage.input_tokens).toBe(usage!.prompt_tokens);
    expect(ours.usage.output_tokens).toBe(usage!.completion_tokens);
    expect(ours.outputText).toBe(text);
  });

  it('streams chat without include_usage and sends no usage, so our parser reports null (not 0)', async () => {
    const stream = await openai.chat.completions.create({
      model: 'sim-medium',
      messages: [{ role: 'user', content: 'Say something.' }],
      stream: true,
    });
    let sawUsage = false;
    for await (const ch of stream) if (ch.usage) sawUsage = true;
    expect(sawUsage).toBe(false);
    const ours = await ourUsage('openai.chat');
    expect(ours.usage.input_tokens).toBeNull();
    expect(ours.usage.output_tokens).toBeNull();
    expect(ours.abandoned).toBe(true);
  });

  it('completes a Responses call plain and streaming with usage', async () => {
    const r = await openai.responses.create({ model: 'sim-small', input: QUESTION, instructions: 'Solve it.' });
    expect(r.status).toBe('completed');
    expect(r.output_text).toMatch(/#### \d+$/);
    expect(r.usage!.output_tokens).toBe(encode(r.output_text).length);
    let ours = await ourUsage('openai.responses');
    expect(ours.usage.input_tokens).toBe(r.usage!.input_tokens);
    expect(ours.usage.output_tokens).toBe(r.usage!.output_tokens);

    const stream = await openai.responses.create({ model: 'sim-small', input: 'Tell me about latency.', stream: true });
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') completed = ev.response;
    }
    expect(completed!.usage!.output_tokens).toBe(encode(text).length);
    ours = await ourUsage('openai.responses');
    expect(ours.usage.input_tokens).toBe(completed!.usage!.input_tokens);
    expect(ours.usage.output_tokens).toBe(completed!.usage!.output_tokens);
    expect(ours.outputText).toBe(text);
  });

  it('talks to the OpenRouter route with usage.cost and provider, matching our parser', async () => {
    const r = await openrouter.chat.completions.create({
      model: 'sim-medium',
      messages: [{ role: 'user', content: 'Hello there' }],
      max_tokens: 64,
    });
    const raw = r as unknown as {
      provider: string;
      usage: { cost: number; prompt_tokens: number; completion_tokens: number };
    };
    expect(raw.provider).toBe('SimCloud');
    // sim-medium prices: 0.40 USD/Mtok input, 1.60 output (README "Default tiers")
    expect(raw.usage.cost).toBeCloseTo((raw.usage.prompt_tokens * 0.4 + raw.usage.completion_tokens * 1.6) / 1e6, 12);
    const ours = await ourUsage('openrouter.chat');
    expect(ours.providerCostUsd).toBe(raw.usage.cost);
    expect(ours.upstream).toBe('SimCloud');
    expect(ours.usage.input_tokens).toBe(raw.usage.prompt_tokens);

    const stream = await openrouter.chat.completions.create({
      model: 'sim-large',
      messages: [{ role: 'user', content: 'Stream please' }],
      stream: true,
    });
    let cost: number | undefined;
    for await (const ch of stream) {
      const u = (ch as unknown as { usage?: { cost?: number } }).usage;
      if (u?.cost !== undefined) cost = u.cost;
    }
    expect(cost).toBeGreaterThan(0);
    const oursStream = await ourUsage('openrouter.chat');
    expect(oursStream.providerCostUsd).toBe(cost);
  });
});

describe('official @anthropic-ai/sdk against the sim', () => {
  it('completes a plain messages call and reports usage that matches the text and our parser', async () => {
    const r = await anthropic.messages.create({
      model: 'sim-large',
      max_tokens: 512,
      messages: [{ role: 'user', content: QUESTION }],
    });
    const block = r.content[0]!;
    expect(block.type).toBe('text');
    const text = block.type === 'text' ? block.text : '';
    expect(text).toMatch(/#### \d+$/);
    expect(r.stop_reason).toBe('end_turn');
    expect(r.usage.output_tokens).toBe(encode(text).length);
    const ours = await ourUsage('anthropic.messages');
    expect(ours.usage.input_tokens).toBe(
      r.usage.input_tokens + (r.usage.cache_read_input_tokens ?? 0) + (r.usage.cache_creation_input_tokens ?? 0),
    );
    expect(ours.usage.cache_read_input_tokens).toBe(r.usage.cache_read_input_tokens);
    expect(ours.usage.cache_creation_input_tokens).toBe(r.usage.cache_creation_input_tokens);
    expect(ours.usage.output_tokens).toBe(r.usage.output_tokens);
  });

  it('streams messages and the SDK final message carries usage equal to our parser', async () => {
    const stream = anthropic.messages.stream({
      model: 'sim-small',
      max_tokens: 300,
      messages: [{ role: 'user', content: 'Describe a market.' }],
    });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    expect(final.usage.output_tokens).toBe(encode(text).length);
    const ours = await ourUsage('anthropic.messages');
    expect(ours.complete).toBe(true);
    expect(ours.usage.output_tokens).toBe(final.usage.output_tokens);
    expect(ours.usage.input_tokens).toBe(
      final.usage.input_tokens +
        (final.usage.cache_read_input_tokens ?? 0) +
        (final.usage.cache_creation_input_tokens ?? 0),
    );
  });

  it('respects max_tokens with stop_reason max_tokens', async () => {
    const r = await anthropic.messages.create({
      model: 'sim-medium',
      max_tokens: 5,
      messages: [{ role: 'user', content: 'Write a long essay.' }],
    });
    expect(r.stop_reason).toBe('max_tokens');
    expect(r.usage.output_tokens).toBe(5);
  });
});

describe('prompt caching seen through the SDKs', () => {
  // ~1,500 tokens of stable system prompt; counted by gpt-tokenizer directly
  const system = Array.from({ length: 150 }, (_, i) => `Rule ${i}: answer politely and check the numbers twice.`).join(
    '\n',
  );

  it('OpenAI: a repeated ≥1024-token prefix reports cached_tokens in 128-token blocks', async () => {
    expect(encode(system).length).toBeGreaterThan(1200);
    const ask = (q: string) =>
      openai.chat.completions.create({
        model: 'sim-small',
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: q },
        ],
      });
    const first = await ask('first question');
    expect(first.usage!.prompt_tokens_details!.cached_tokens).toBe(0);
    const second = await ask('second question, different');
    const cached = second.usage!.prompt_tokens_details!.cached_tokens!;
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect((cached - 1024) % 128).toBe(0);
    expect(cached).toBeLessThanOrEqual(encode(system).length + 2);
    const ours = await ourUsage('openai.chat');
    expect(ours.usage.cache_read_input_tokens).toBe(cached);
  });

  it('Anthropic: the first call writes the cache, the repeat reads it', async () => {
    const ask = (q: string) =>
      anthropic.messages.create({
        model: 'sim-medium',
        max_tokens: 64,
        system,
        messages: [{ role: 'user', content: q }],
      });
    const first = await ask('alpha');
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThanOrEqual(1024);
    const second = await ask('beta');
    expect(second.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(1024);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
    const ours = await ourUsage('anthropic.messages');
    expect(ours.usage.cache_read_input_tokens).toBe(second.usage.cache_read_input_tokens);
    expect(ours.usage.input_tokens).toBe(second.usage.input_tokens + second.usage.cache_read_input_tokens!);
  });
});
