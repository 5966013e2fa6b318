// Cross-check against independent implementations: each recorded fixture is served over loopback
// HTTP (its recorded status and headers, the body in small chunks across event-loop turns) to the
// official `openai` and `@anthropic-ai/sdk` clients. What the SDKs report must match what our
// parser reads from the same bytes as they arrive.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '@shadowplane/contracts';
import { createResponseParser } from './index.js';
import type { ParsedResponse } from './index.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/providers/', import.meta.url));
const HOP = new Set(['content-length', 'content-encoding', 'transfer-encoding', 'connection']);

let server: Server;
let base: string;
/** What our parser made of each served response, keyed by fixture path. */
const ours = new Map<string, ParsedResponse>();

function apiOf(fixture: string): Api {
  if (fixture.startsWith('anthropic/')) return 'anthropic.messages';
  if (fixture.startsWith('openrouter/')) return 'openrouter.chat';
  return fixture.includes('/responses-') ? 'openai.responses' : 'openai.chat';
}

beforeAll(async () => {
  // URL: /<provider>/<file>/<api path>; the fixture is served whatever the API path.
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const [, provider, file] = (req.url ?? '').split('/');
      const fixture = `${provider}/${decodeURIComponent(file ?? '')}`;
      const bodyPath = `${FIXTURES}${fixture}`;
      if (!existsSync(bodyPath)) {
        res.writeHead(404).end();
        return;
      }
      const sidecar = `${bodyPath.replace(/\.(json|sse)$/, '')}.headers.json`;
      const side = existsSync(sidecar)
        ? (JSON.parse(readFileSync(sidecar, 'utf8')) as { status: number; headers: [string, string][] })
        : {
            status: Number(/error-(\d{3})/.exec(fixture)?.[1] ?? 200),
            headers: [['content-type', 'application/json']] as [string, string][],
          };
      const headers = side.headers.filter(([k]) => !HOP.has(k.toLowerCase()));
      const bytes = readFileSync(bodyPath);
      const t0 = performance.now();
      const parser = createResponseParser(apiOf(fixture), { status: side.status, headers }, t0);
      res.writeHead(side.status, headers.flat());
      let i = 0;
      const step = () => {
        if (i >= bytes.length) {
          ours.set(fixture, parser.end(performance.now()));
          res.end();
          return;
        }
        const n = 1 + ((i * 7919) % 97); // 1–97 byte writes, deterministic
        const chunk = bytes.subarray(i, i + n);
        parser.push(chunk, performance.now());
        res.write(chunk);
        i += n;
        setImmediate(step);
      };
      step();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const openai = (fixture: string, prefix = '/v1') =>
  new OpenAI({ apiKey: 'sk-test', baseURL: `${base}/${fixture}${prefix}`, maxRetries: 0 });
const anthropic = (fixture: string) =>
  new Anthropic({ apiKey: 'sk-ant-test', baseURL: `${base}/${fixture}`, maxRetries: 0 });
const MSG = [{ role: 'user' as const, content: 'hi' }];

describe('official SDKs vs our parser on the recorded fixtures', () => {
  it('openai chat stream with include_usage: same usage, text and finish reason', async () => {
    const f = 'openai/chat-stream-include-usage-cached-1024.sse';
    const stream = await openai(f).chat.completions.create({
      model: 'gpt-4.1',
      messages: MSG,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    const r = ours.get(f)!;
    expect(r.outputText).toBe(text);
    expect(r.finishReason).toBe(finish);
    expect(r.usage.input_tokens).toBe(usage!.prompt_tokens);
    expect(r.usage.cache_read_input_tokens).toBe(usage!.prompt_tokens_details!.cached_tokens);
    expect(r.usage.output_tokens).toBe(usage!.completion_tokens);
    expect(r.usage.raw).toEqual(usage);
    expect(r.ttftMs).not.toBeNull();
  });

  it('openai chat stream without usage: the SDK sees no usage either, and we report null, not 0', async () => {
    const f = 'openai/chat-stream-no-usage.sse';
    const stream = await openai(f).chat.completions.create({ model: 'gpt-3.5-turbo', messages: MSG, stream: true });
    let text = '';
    let sawUsage = false;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) sawUsage = true;
    }
    expect(sawUsage).toBe(false);
    const r = ours.get(f)!;
    expect(r.outputText).toBe(text);
    expect(r.abandoned).toBe(true);
    expect(r.usage.input_tokens).toBeNull();
  });

  it('openai chat JSON: same usage and text', async () => {
    const f = 'openai/chat-reasoning-tokens-gpt5nano.json';
    const c = await openai(f).chat.completions.create({ model: 'gpt-5-nano', messages: MSG });
    const r = ours.get(f)!;
    expect(r.outputText).toBe(c.choices[0]!.message.content);
    expect(r.usage.output_tokens).toBe(c.usage!.completion_tokens);
    expect(r.usage.reasoning_output_tokens).toBe(c.usage!.completion_tokens_details!.reasoning_tokens);
  });

  it('openai responses stream: same final usage and text as the SDK stream helper', async () => {
    const f = 'openai/responses-stream-basic.sse';
    const stream = openai(f).responses.stream({ model: 'gpt-5.5', input: 'ping' });
    const final = await stream.finalResponse();
    const r = ours.get(f)!;
    expect(r.outputText).toBe(final.output_text);
    expect(r.usage.input_tokens).toBe(final.usage!.input_tokens);
    expect(r.usage.output_tokens).toBe(final.usage!.output_tokens);
    expect(r.usage.reasoning_output_tokens).toBe(final.usage!.output_tokens_details.reasoning_tokens);
    expect(r.finishReason).toBe(final.status);
  });

  it('openrouter stream through the openai SDK: usage.cost and provider echo match', async () => {
    const f = 'openrouter/chat-stream-cost.sse';
    const stream = await openai(f, '/api/v1').chat.completions.create({
      model: 'anthropic/claude-3.5-sonnet',
      messages: MSG,
      stream: true,
    });
    let usage: (OpenAI.CompletionUsage & { cost?: number }) | undefined;
    let provider: string | undefined;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage as OpenAI.CompletionUsage & { cost?: number };
      provider = (chunk as unknown as { provider?: string }).provider ?? provider;
    }
    const r = ours.get(f)!;
    expect(r.providerCostUsd).toBe(usage!.cost);
    expect(r.upstream).toBe(provider);
    expect(r.usage.input_tokens).toBe(usage!.prompt_tokens);
  });

  for (const f of ['anthropic/stream-tool-use.sse', 'anthropic/stream-cache-read-padded.sse']) {
    it(`${f}: the Anthropic SDK's merged final message has the usage we normalise`, async () => {
      const stream = anthropic(f).messages.stream({ model: 'claude', max_tokens: 512, messages: MSG });
      const m = await stream.finalMessage();
      const r = ours.get(f)!;
      const sdkInput =
        m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0) + (m.usage.cache_creation_input_tokens ?? 0);
      expect(r.usage.input_tokens).toBe(sdkInput);
      expect(r.usage.output_tokens).toBe(m.usage.output_tokens);
      expect(r.usage.cache_read_input_tokens).toBe(m.usage.cache_read_input_tokens);
      expect(r.finishReason).toBe(m.stop_reason);
      const sdkText = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      expect(r.outputText).toBe(sdkText);
      const sdkTools = m.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, input: b.input }] : []));
      expect(r.toolCalls.map((t) => ({ name: t.name, input: JSON.parse(t.arguments) as unknown }))).toEqual(sdkTools);
      expect(r.ttftMs).not.toBeNull();
    });
  }

  it('anthropic JSON with cache writes: same usage as the SDK', async () => {
    const f = 'anthropic/messages-cache-write-4167.json';
    const m = await anthropic(f).messages.create({ model: 'claude', max_tokens: 512, messages: MSG });
    const r = ours.get(f)!;
    expect(r.usage.cache_creation_input_tokens).toBe(m.usage.cache_creation_input_tokens);
    expect(r.usage.input_tokens).toBe(
      m.usage.input_tokens + (m.usage.cache_creation_input_tokens ?? 0) + (m.usage.cache_read_input_tokens ?? 0),
    );
  });

  it.each([
    ['anthropic/error-529-overloaded.json', 529, 'overloaded'],
    ['anthropic/error-400-invalid-request.json', 400, 'invalid_request'],
    ['anthropic/error-429-rate-limit.json', 429, 'rate_limited'],
  ])('%s: the SDK throws an APIError with status %i; we classify %s', async (f, status, cls) => {
    const err = await anthropic(f)
      .messages.create({ model: 'claude', max_tokens: 8, messages: MSG })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(status);
    expect(ours.get(f)!.errorClass).toBe(cls);
  });

  it.each([
    ['openai/error-400-unsupported-parameter.json', 400, 'invalid_request'],
    ['openai/error-500-server-error.json', 500, 'upstream_5xx'],
    ['openrouter/error-429-upstream-rate-limited.json', 429, 'rate_limited'],
  ])('%s: the openai SDK throws an APIError with status %i; we classify %s', async (f, status, cls) => {
    const client = f.startsWith('openrouter/') ? openai(f, '/api/v1') : openai(f);
    const err = await client.chat.completions.create({ model: 'm', messages: MSG }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(status);
    expect(ours.get(f)!.errorClass).toBe(cls);
  });
});
