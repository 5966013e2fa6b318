import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Envelope, itemHash } from '@shadowplane/contracts';
import { buildEnvelope } from './capture.js';
import type { CaptureInput } from './capture-protocol.js';
import type { SampleDecision } from './sampling.js';

const fx = (p: string) => readFileSync(new URL(`../../../test/fixtures/providers/${p}`, import.meta.url));

function decision(
  api: Extract<SampleDecision, { kind: 'sampled' }>['api'],
  extra: Partial<Extract<SampleDecision, { kind: 'sampled' }>> = {},
): Extract<SampleDecision, { kind: 'sampled' }> {
  return {
    kind: 'sampled',
    api,
    suite: 's',
    callType: 'c',
    trafficClass: 'production',
    expectations: [],
    retentionConsent: false,
    stickyKeyHash: null,
    models: null,
    rule: null,
    ...extra,
  };
}

function input(
  api: Parameters<typeof decision>[0],
  path: string,
  body: Buffer,
  resp: { status: number; headers: [string, string][]; body: Buffer } | null,
  over: Partial<CaptureInput> = {},
): CaptureInput {
  return {
    decision: decision(api),
    method: 'POST',
    path,
    contentType: 'application/json',
    contentEncoding: null,
    requestChunks: [body],
    requestBytes: body.length,
    response: resp && {
      status: resp.status,
      headers: resp.headers,
      chunks: [resp.body],
      times: [12],
      truncated: false,
    },
    startMs: 0,
    endMs: 20,
    placement: 'egress',
    sidecarId: 'unit',
    inlineMaxBytes: 512 * 1024,
    maxBodyBytes: 32 << 20,
    maxDecodeRatio: 100,
    cpuBudgetMs: 10_000,
    secretFieldNames: [],
    bodyStore: 'shadow_capture_bodies',
    ...over,
  };
}

function env(r: ReturnType<typeof buildEnvelope>): Envelope {
  if (r.kind !== 'envelope') throw new Error(`excluded: ${r.reason}`);
  // the published bytes satisfy the contract schema
  return Envelope.parse(JSON.parse(Buffer.from(r.data).toString()));
}

describe('buildEnvelope', () => {
  it('writes an unredacted body as the client sent it, and the envelope parses to the same value as JSON.stringify gives', () => {
    // whitespace, key order, escapes and non-Latin-1 text as a client may send them
    const text =
      ' {\n  "model" : "gpt-4o-mini",\t"messages": [{"role":"user","content":"Janet\\u2019s ducks \\\\ \\"lay\\" 16 eggs ’ 🦆"}],\n "max_tokens": 16 }\n';
    const r = buildEnvelope(input('openai.chat', '/v1/chat/completions', Buffer.from(text), null));
    if (r.kind !== 'envelope') throw new Error(r.reason);
    const published = Buffer.from(r.data).toString();
    expect(published).toContain(`"request":{"body":${text},"body_ref":null`);
    expect(JSON.parse(published)).toEqual(JSON.parse(JSON.stringify(r.envelope)));
    expect(Envelope.parse(JSON.parse(published)).request.body).toEqual(JSON.parse(text));
  });

  it('serialises a redacted body (the client text holds the PII)', () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'mail me at jane.doe@example.com' }] };
    const r = buildEnvelope(input('openai.chat', '/v1/chat/completions', Buffer.from(JSON.stringify(body)), null));
    if (r.kind !== 'envelope') throw new Error(r.reason);
    const published = Buffer.from(r.data).toString();
    expect(published).not.toContain('jane.doe@example.com');
    expect(JSON.parse(published)).toEqual(JSON.parse(JSON.stringify(r.envelope)));
  });

  it('anthropic stream: usage from message_start + message_delta (input 506, output 153), model echo, stream flag', () => {
    const body = {
      model: 'claude-3-5-sonnet-20240620',
      max_tokens: 256,
      stream: true,
      messages: [{ role: 'user', content: 'weather?' }],
    };
    const e = env(
      buildEnvelope(
        input('anthropic.messages', '/v1/messages', Buffer.from(JSON.stringify(body)), {
          status: 200,
          headers: [['content-type', 'text/event-stream']],
          body: fx('anthropic/stream-tool-use.sse'),
        }),
      ),
    );
    expect(e.item_hash).toBe(itemHash('anthropic.messages', '/v1/messages', body));
    expect(e.served?.usage.input_tokens).toBe(506);
    expect(e.served?.usage.output_tokens).toBe(153);
    expect(e.served?.model).toBe('claude-3-5-sonnet-20240620');
    expect(e.served?.stream).toBe(true);
    expect(e.served?.latency_ms).toBe(20);
    expect(e.source.placement).toBe('egress');
  });

  it('openai responses (gzip-compressed response): usage with reasoning 64 of 131 output tokens', () => {
    const body = { model: 'gpt-5-nano', input: 'Think briefly.' };
    const e = env(
      buildEnvelope(
        input('openai.responses', '/v1/responses', Buffer.from(JSON.stringify(body)), {
          status: 200,
          headers: [
            ['Content-Type', 'application/json'],
            ['Content-Encoding', 'gzip'],
          ],
          body: gzipSync(fx('openai/responses-nonstream-reasoning.json')),
        }),
      ),
    );
    expect(e.served?.usage.input_tokens).toBe(11);
    expect(e.served?.usage.output_tokens).toBe(131);
    expect(e.served?.usage.reasoning_output_tokens).toBe(64);
    expect(e.served?.model).toBe('gpt-5-nano-2025-08-07');
    expect(e.served?.ttft_ms).toBeNull();
  });

  it('a gzip-encoded request body is decoded before parsing; the stored body is the redacted JSON', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'mail a@b.io' }] };
    const gz = gzipSync(Buffer.from(JSON.stringify(body)));
    const r = buildEnvelope(input('openai.chat', '/v1/chat/completions', gz, null, { contentEncoding: 'gzip' }));
    const e = env(r);
    expect(e.request.body).toEqual({ model: 'm', messages: [{ role: 'user', content: 'mail <EMAIL>' }] });
    expect(e.request.bytes).toBe(gz.length);
    expect(e.served).toBeNull();
  });

  it('a truncated response tee gives served: null; a 2xx without usage is abandoned with null usage', () => {
    const body = Buffer.from('{"model":"m","messages":[]}');
    const trunc = buildEnvelope({
      ...input('openai.chat', '/v1/chat/completions', body, null),
      response: { status: 200, headers: [], chunks: [], times: [], truncated: true },
    });
    expect(env(trunc).served).toBeNull();
    const noUsage = env(
      buildEnvelope(
        input('openai.chat', '/v1/chat/completions', body, {
          status: 200,
          headers: [['content-type', 'application/json']],
          body: Buffer.from(
            '{"id":"x","model":"m","choices":[{"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}',
          ),
        }),
      ),
    );
    expect(noUsage.served?.abandoned).toBe(true);
    expect(noUsage.served?.usage.input_tokens).toBeNull();
    expect(noUsage.served?.usage.output_tokens).toBeNull();
  });

  it('excludes non-JSON, non-object and broken-encoding bodies with a reason', () => {
    expect(buildEnvelope(input('openai.chat', '/v1/chat/completions', Buffer.from('[1,2]'), null))).toMatchObject({
      kind: 'excluded',
      reason: 'not_json',
    });
    expect(
      buildEnvelope(input('openai.chat', '/v1/chat/completions', Buffer.from([0x7b, 0xff, 0x7d]), null)),
    ).toMatchObject({ kind: 'excluded', reason: 'not_json' });
    expect(
      buildEnvelope(
        input('openai.chat', '/v1/chat/completions', Buffer.from('not gzip'), null, { contentEncoding: 'gzip' }),
      ),
    ).toMatchObject({ kind: 'excluded', reason: 'bad_body_encoding' });
  });

  it('a key repeated in one object never carries its dropped value into the envelope, inline or in the object store', () => {
    // JSON.parse keeps the last "content"; the first one, which redaction never sees, holds PII
    const text =
      '{"model":"m","messages":[{"role":"user","content":"mail jane.doe@example.com \\" : {","content":"hi: there"}],"n":1}';
    expect(JSON.parse(text)).toEqual({ model: 'm', messages: [{ role: 'user', content: 'hi: there' }], n: 1 });
    for (const inlineMaxBytes of [512 * 1024, 16]) {
      const r = buildEnvelope(
        input('openai.chat', '/v1/chat/completions', Buffer.from(text), null, { inlineMaxBytes }),
      );
      if (r.kind !== 'envelope') throw new Error(r.reason);
      const bytes = Buffer.concat([Buffer.from(r.data), r.body?.bytes ?? Buffer.alloc(0)]);
      expect(bytes.includes('jane.doe')).toBe(false);
      const stored = inlineMaxBytes > 16 ? env(r).request.body : JSON.parse(r.body!.bytes.toString());
      expect(stored).toEqual(JSON.parse(text));
    }
    // a number that overflows (1e400 parses to Infinity) is stored as JSON writes the value
    const big = buildEnvelope(
      input(
        'openai.chat',
        '/v1/chat/completions',
        Buffer.from('{"model":"m","metadata":{"n":1e400},"messages":[]}'),
        null,
      ),
    );
    if (big.kind !== 'envelope') throw new Error(big.reason);
    expect(JSON.parse(Buffer.from(big.data).toString())).toEqual(JSON.parse(JSON.stringify(big.envelope)));
    expect(Buffer.from(big.data).includes('1e400')).toBe(false);
    // colons and quotes inside strings are not mistaken for members: a body without repeats is kept as sent
    const plain = '{"model":"m","messages":[{"role":"user","content":"a: \\"b\\": {c:d} ’"}]}';
    const r = buildEnvelope(input('openai.chat', '/v1/chat/completions', Buffer.from(plain), null));
    if (r.kind !== 'envelope') throw new Error(r.reason);
    expect(Buffer.from(r.data).includes(plain)).toBe(true);
  });

  it('a body over the inline limit becomes a body_ref named by its sha256, with the exact bytes kept', () => {
    const raw = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'z'.repeat(5000) }] }));
    const r = buildEnvelope(input('openai.chat', '/v1/chat/completions', raw, null, { inlineMaxBytes: 1024 }));
    const e = env(r);
    expect(e.request.body).toBeNull();
    expect(e.request.body_ref?.bytes).toBe(raw.length);
    if (r.kind === 'envelope') {
      expect(r.body?.bytes.equals(raw)).toBe(true);
      expect(r.body?.name).toBe(`req-${e.request.body_ref?.sha256}`);
    }
  });
});
